import GATTTestPeer
import Testing

@testable import SecureDFU

@Suite struct SecureDFUTests {
    static func transfer(
        _ package: DFUPackage = DFUTestPackages.package(), receipts: UInt16 = 8, packetSize: Int = 20,
        installedVersion: UInt32? = nil
    ) -> SecureDFUTransfer {
        SecureDFUTransfer(
            package: package,
            configuration: .init(packetSize: packetSize, receiptInterval: receipts, installedVersion: installedVersion))
    }

    /// Packets of 20 bytes for image bytes `start..<end`, objects of 1,024 bytes never sharing a packet.
    static func packetCount(from start: Int, to end: Int) -> Int {
        var count = 0
        var offset = start
        while offset < end {
            let objectEnd = min((offset / 1_024 + 1) * 1_024, end)
            count += (objectEnd - offset + 19) / 20
            offset = objectEnd
        }
        return count
    }

    @Test func transfersAFewKilobyteImageWithReceiptsAndProgress() throws {
        let package = DFUTestPackages.package(size: 5_000)
        var transfer = Self.transfer(package)
        var target = TestDFUTarget(image: package.firmware)
        let run = DFURun.run(&transfer, &target)

        guard case .completed(let final) = run.outcome else {
            Issue.record("expected completion, got \(String(describing: run.outcome))")
            return
        }
        #expect(target.imageAccepted)
        #expect(target.data == package.firmware)
        #expect(target.commandExecuted)
        #expect(target.dataCreates == 5)  // 5,000 bytes in objects of 1,024
        #expect(final.bytes == 5_000)
        #expect(final.percent == 100)
        #expect(final.totalBytes == 5_000)
        #expect((final.bytesPerSecond ?? 0) > 0)
        // Progress only moves forward and reaches 100.
        let bytes = run.progress.map(\.bytes) + [final.bytes]
        #expect(bytes == bytes.sorted())
        #expect(Set(bytes).count == bytes.count)
        #expect(run.progress.count > 10)
        #expect(run.progress.map(\.percent) == run.progress.map(\.percent).sorted())
        #expect(run.receipts > 0)
        // The image went out once: 5,000 / 20 packets plus the init packet's.
        let initPackets = (package.initPacket.count + 19) / 20
        #expect(run.packets.count == Self.packetCount(from: 0, to: 5_000) + initPackets)
        #expect(run.packets.allSatisfy { $0.count <= 20 })
        // The protocol's opening: receipts off, Select command, Create command of the init packet's size.
        #expect(run.controlPointWrites.first == [0x02, 0x00, 0x00])
        #expect(run.controlPointWrites[1] == [0x06, 0x01])
        #expect(
            run.controlPointWrites[2] == [0x01, 0x01] + SecureDFUProtocol.littleEndian(UInt32(package.initPacket.count))
        )
        #expect(run.controlPointWrites.contains([0x02, 0x08, 0x00]))
        #expect(transfer.isFinished)
        #expect(transfer.nextDeadline == nil)
    }

    @Test(arguments: [UInt16(0), 1, 7, 51, 52])
    func anyReceiptIntervalCompletes(_ interval: UInt16) {
        let package = DFUTestPackages.package(size: 3_001)
        var transfer = Self.transfer(package, receipts: interval, packetSize: 20)
        var target = TestDFUTarget(image: package.firmware)
        let run = DFURun.run(&transfer, &target)
        #expect(run.outcome.map { if case .completed = $0 { true } else { false } } == true)
        #expect(target.imageAccepted)
        #expect(interval != 0 || run.receipts == 0)
    }

    @Test func aTransferCutMidObjectResumesFromTheTargetsOffset() throws {
        let package = DFUTestPackages.package(size: 5_000)
        var target = TestDFUTarget(image: package.firmware)
        var first = Self.transfer(package)
        let cut = DFURun.run(&first, &target, disconnectAfterPackets: 130)
        guard case .failed(.disconnected(let step, let confirmed)) = cut.outcome else {
            Issue.record("expected a disconnect, got \(String(describing: cut.outcome))")
            return
        }
        #expect(step == .sendFirmware)
        #expect(confirmed > 1_024 && confirmed < 5_000)
        #expect(confirmed <= target.data.count)
        let held = target.data.count
        let creates = (target.commandCreates, target.dataCreates)

        var second = Self.transfer(package)
        let resumed = DFURun.run(&second, &target, start: 200)
        #expect(resumed.outcome.map { if case .completed = $0 { true } else { false } } == true)
        #expect(target.imageAccepted)
        #expect(target.data == package.firmware)
        // The init packet was executed again, not resent; the partial object was completed, not recreated.
        #expect(target.commandCreates == creates.0)
        #expect(!resumed.controlPointWrites.contains { $0.first == SecureDFUProtocol.create && $0[1] == 0x01 })
        #expect(resumed.packets.count == Self.packetCount(from: held, to: 5_000))
        #expect(resumed.packets.first == Array(package.firmware[held..<min(held + 20, (held / 1_024 + 1) * 1_024)]))
        #expect(target.dataCreates == creates.1 + (5_000 - 1) / 1_024 - held / 1_024)
        // Progress of the resumed transfer starts at the held offset and the rate counts only new bytes.
        #expect((resumed.progress.first?.bytes ?? 0) > held)
    }

    @Test func aCompleteButUnexecutedObjectIsExecutedOnResume() {
        let package = DFUTestPackages.package(size: 3_000)
        var target = TestDFUTarget(image: package.firmware)
        target.command = package.initPacket
        target.commandSize = package.initPacket.count
        target.commandExecuted = true
        target.writing = .data
        target.data = Array(package.firmware[0..<1_024])
        target.objectSize = 1_024
        var transfer = Self.transfer(package)
        let run = DFURun.run(&transfer, &target)
        #expect(target.imageAccepted)
        let afterSelect = run.controlPointWrites.drop { $0 != [0x06, 0x02] }.dropFirst()
        #expect(afterSelect.first == [0x04])
        #expect(run.packets.first == Array(package.firmware[1_024..<1_044]))
    }

    @Test func aPartialObjectWithTheWrongCRCIsSentAgainFromItsStart() {
        let package = DFUTestPackages.package(size: 3_000)
        var target = TestDFUTarget(image: package.firmware)
        target.command = package.initPacket
        target.commandSize = package.initPacket.count
        target.commandExecuted = true
        target.data = Array(package.firmware[0..<1_500])
        target.data[1_200] ^= 0x01
        target.executedOffset = 1_024
        target.objectSize = 1_024
        var transfer = Self.transfer(package)
        let run = DFURun.run(&transfer, &target)
        #expect(target.imageAccepted)
        #expect(target.data == package.firmware)
        #expect(run.packets.first == Array(package.firmware[1_024..<1_044]))
    }

    @Test func aCorruptedPacketIsCaughtAndItsObjectSentAgain() {
        let package = DFUTestPackages.package(size: 4_000)
        var target = TestDFUTarget(image: package.firmware)
        target.corruptPackets = [40, 200]
        var transfer = Self.transfer(package, receipts: 0)
        let run = DFURun.run(&transfer, &target)
        #expect(run.outcome.map { if case .completed = $0 { true } else { false } } == true)
        #expect(target.imageAccepted)
        #expect(target.dataCreates == 4 + 2)
    }

    @Test(arguments: [UInt16(0), 8])
    func aTargetThatCorruptsEverythingFailsAfterTheRetries(_ receipts: UInt16) {
        let package = DFUTestPackages.package(size: 2_000)
        var target = TestDFUTarget(image: package.firmware)
        var transfer = Self.transfer(package, receipts: receipts)
        // Let the init packet through, then corrupt every image packet.
        target.corruptPackets = []
        var run = DFURun()
        var pending = transfer.handle(.start(at: 0))
        var inbox: [[UInt8]] = []
        while !pending.isEmpty || !inbox.isEmpty {
            if pending.isEmpty {
                pending = transfer.handle(.controlPoint(inbox.removeFirst(), at: 1))
                continue
            }
            switch pending.removeFirst() {
            case .writeControlPoint(let bytes):
                if bytes == [0x06, 0x02] { target.corruptEveryPacket = true }
                inbox += target.controlPoint(bytes)
            case .writePacket(let bytes): inbox += target.packet(bytes)
            case .progress: break
            case let end: run.outcome = end
            }
        }
        guard case .failed(.checksumMismatch(let step, let expectedOffset, _, _, _)) = run.outcome else {
            Issue.record("expected a checksum mismatch, got \(String(describing: run.outcome))")
            return
        }
        #expect(step == (receipts == 0 ? .verifyChecksum : .sendFirmware))
        #expect(expectedOffset == (receipts == 0 ? 1_024 : 160))
        #expect(target.dataCreates == 4)  // the first try and 3 retries
        #expect(!target.imageAccepted)
    }

    @Test func theTargetsRefusalNamesTheStep() {
        let package = DFUTestPackages.package(version: 2)
        var target = TestDFUTarget(image: package.firmware)
        target.installedVersion = 5
        var transfer = Self.transfer(package)
        let run = DFURun.run(&transfer, &target)
        #expect(run.outcome == .failed(.target(.executeCommand, .extendedError(.firmwareVersionFailure))))
        #expect(target.dataCreates == 0)
    }

    @Test func anInitPacketLargerThanTheCommandObjectIsRefusedBeforeAnyByte() {
        let package = DFUTestPackages.package()
        var target = TestDFUTarget(image: package.firmware)
        target.commandMaximumSize = 64
        var transfer = Self.transfer(package)
        let run = DFURun.run(&transfer, &target)
        #expect(
            run.outcome
                == .failed(
                    .invalidPackage(.selectCommand, [.initPacketTooLarge(size: package.initPacket.count, maximum: 64)]))
        )
        #expect(run.packets.isEmpty)
        #expect(target.commandCreates == 0)
    }

    @Test func aDeadlineWithoutAnAnswerTimesOutNamingTheStep() {
        var transfer = Self.transfer()
        #expect(transfer.handle(.start(at: 50)) == [.writeControlPoint([0x02, 0x00, 0x00])])
        #expect(transfer.nextDeadline == 60)
        #expect(transfer.handle(.tick(at: 59.9)) == [])
        #expect(transfer.handle(.tick(at: 60)) == [.failed(.timeout(.setReceiptNotification))])
        #expect(transfer.isFinished)
        #expect(transfer.handle(.controlPoint([0x60, 0x02, 0x01], at: 61)) == [])
    }

    @Test func aFailedWriteEndsTheTransferWithTheGATTError() {
        var transfer = Self.transfer()
        _ = transfer.handle(.start(at: 0))
        #expect(
            transfer.handle(.writeFailed(.insufficientEncryption(.write, .insufficientEncryption)))
                == [.failed(.link(.setReceiptNotification, .insufficientEncryption(.write, .insufficientEncryption)))])
    }

    @Test(arguments: [
        [UInt8](),  // empty
        [0x61, 0x02, 0x01],  // not a response
        [0x60, 0x06, 0x01],  // response to Select where Set PRN was sent
        [0x60, 0x02],  // no result
        [0x60, 0x02, 0x0B],  // extended error without its byte
        [0x60, 0x02, 0x0B, 0x77],  // unknown extended error
    ])
    func malformedNotificationsAreTypedErrors(_ bytes: [UInt8]) {
        var transfer = Self.transfer()
        _ = transfer.handle(.start(at: 0))
        let actions = transfer.handle(.controlPoint(bytes, at: 1))
        guard case .failed(.malformedResponse(.setReceiptNotification, _)) = actions.first else {
            Issue.record("expected malformed, got \(actions)")
            return
        }
        #expect(actions.count == 1)
    }

    @Test func aTruncatedSelectResponseIsMalformed() {
        var transfer = Self.transfer()
        _ = transfer.handle(.start(at: 0))
        _ = transfer.handle(.controlPoint([0x60, 0x02, 0x01], at: 1))
        let actions = transfer.handle(.controlPoint([0x60, 0x06, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00], at: 2))
        guard case .failed(.malformedResponse(.selectCommand, _)) = actions.first else {
            Issue.record("expected malformed, got \(actions)")
            return
        }
    }

    @Test func randomNotificationsNeverTrap() {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<2_000 {
            var transfer = Self.transfer(DFUTestPackages.package(size: 300))
            _ = transfer.handle(.start(at: 0))
            for step in 0..<8 {
                let length = Int.random(in: 0...16, using: &generator)
                var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if bytes.count > 2 {
                    bytes[0] = 0x60
                    bytes[2] = UInt8.random(in: 0...2, using: &generator)
                }
                _ = transfer.handle(.controlPoint(bytes, at: Double(step)))
            }
            #expect(transfer.isFinished || transfer.nextDeadline != nil)
        }
    }
}
