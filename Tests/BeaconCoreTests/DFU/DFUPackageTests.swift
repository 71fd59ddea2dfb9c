import GATTTestPeer
import Testing

@testable import SecureDFU

@Suite struct DFUPackageTests {
    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        let bytes = DFUTestPackages.image(3_000)
        let split = CRC32.checksum(bytes, 1_000..<3_000, continuing: CRC32.checksum(bytes, 0..<1_000))
        #expect(split == CRC32.checksum(bytes))
    }

    @Test(arguments: [true, false]) func readsTheInitPacketsVersionAndSizes(_ signed: Bool) throws {
        let bytes = DFUTestPackages.initPacket(version: 42, applicationSize: 5_000, signed: signed)
        let command = try #require(DFUInitCommand(bytes))
        #expect(command.firmwareVersion == 42)
        #expect(command.hardwareVersion == 52)
        #expect(command.firmwareType == 0)
        #expect(command.applicationSize == 5_000)
        #expect(command.imageSize == 5_000)
        #expect(command.isSigned == signed)
        #expect(DFUPackage(initPacket: bytes, firmware: [1]).firmwareVersion == 42)
        #expect(DFUPackage(initPacket: bytes, firmware: [1], firmwareVersion: 7).firmwareVersion == 7)
    }

    @Test func initPacketTruncationsAndNoiseNeverTrap() {
        let bytes = DFUTestPackages.initPacket(version: 42, applicationSize: 5_000)
        var parsedPrefixes = 0
        for length in 0..<bytes.count where DFUInitCommand(Array(bytes.prefix(length))) != nil { parsedPrefixes += 1 }
        // A prefix cuts the outer length-delimited field, so none parses.
        #expect(parsedPrefixes == 0)
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<5_000 {
            var noisy = bytes
            for _ in 0..<3 {
                noisy[Int.random(in: 0..<noisy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = DFUInitCommand(noisy)
            _ = DFUInitCommand(
                (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
                })
        }
        #expect(DFUInitCommand([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == nil)
        #expect(DFUInitCommand([0x0A, 0x7F]) == nil)
    }

    @Test func aGoodPackageHasNoProblems() {
        let package = DFUTestPackages.package(size: 5_000, version: 3)
        #expect(package.problems() == [])
        #expect(package.problems(installedVersion: 2) == [])
        let stated = DFUPackage(
            initPacket: package.initPacket, firmware: package.firmware, expectedFirmwareCRC32: package.firmwareCRC32)
        #expect(stated.problems() == [])
    }

    @Test func everyProblemIsReportedAtOnce() {
        let initPacket = DFUTestPackages.initPacket(version: 3, applicationSize: 4_000)
        let package = DFUPackage(
            initPacket: initPacket, firmware: DFUTestPackages.image(5_000), expectedFirmwareCRC32: 0x1234_5678)
        #expect(
            package.problems(installedVersion: 3)
                == [
                    .firmwareCRCMismatch(expected: 0x1234_5678, actual: package.firmwareCRC32),
                    .sizeMismatch(initPacket: 4_000, firmware: 5_000),
                    .versionNotNewer(installed: 3, package: 3),
                ])
        #expect(package.problems(installedVersion: 3, allowDowngrade: true).count == 2)
        #expect(DFUPackage(initPacket: [], firmware: []).problems() == [.emptyInitPacket, .emptyFirmware])
    }

    @Test(arguments: [
        ("CRC", DFUPackageProblem.firmwareCRCMismatch(expected: 1, actual: 0)),
        ("size", .sizeMismatch(initPacket: 4_000, firmware: 5_000)),
        ("version", .versionNotNewer(installed: 9, package: 3)),
        ("empty", .emptyInitPacket),
    ])
    func aWrongPackageIsRefusedBeforeAnyTransfer(_ name: String, _ problem: DFUPackageProblem) {
        let good = DFUTestPackages.package(size: 5_000, version: 3)
        var package = good
        var installed: UInt32?
        switch problem {
        case .firmwareCRCMismatch:
            package.expectedFirmwareCRC32 = good.firmwareCRC32 ^ 1
        case .sizeMismatch:
            package = DFUPackage(
                initPacket: DFUTestPackages.initPacket(version: 3, applicationSize: 4_000), firmware: good.firmware)
        case .versionNotNewer:
            installed = 9
        default:
            package.initPacket = []
        }
        var transfer = SecureDFUTransfer(package: package, configuration: .init(installedVersion: installed))
        var target = TestDFUTarget(image: good.firmware)
        let run = DFURun.run(&transfer, &target)
        guard case .failed(.invalidPackage(.validatePackage, let problems)) = run.outcome else {
            Issue.record("\(name): expected a refusal, got \(String(describing: run.outcome))")
            return
        }
        #expect(problems.count == 1)
        #expect(problems.first.map { Self.sameKind($0, problem) } == true)
        #expect(run.controlPointWrites.isEmpty)
        #expect(run.packets.isEmpty)
        #expect(target.packetsReceived == 0)
    }

    static func sameKind(_ lhs: DFUPackageProblem, _ rhs: DFUPackageProblem) -> Bool {
        switch (lhs, rhs) {
        case (.firmwareCRCMismatch, .firmwareCRCMismatch), (.sizeMismatch, .sizeMismatch),
            (.versionNotNewer, .versionNotNewer), (.emptyInitPacket, .emptyInitPacket):
            return true
        default:
            return false
        }
    }

    @Test func responsesRoundTrip() throws {
        var select = SecureDFUResponse(requestOpcode: 0x06, result: .success)
        select.maximumSize = 4_096
        select.offset = 1_234
        select.crc = 0xDEAD_BEEF
        #expect(try SecureDFUResponse.decode(select.encode()) == select)
        #expect(select.encode().count == 15)
        let refused = SecureDFUResponse(requestOpcode: 0x04, result: .extendedError(.signatureMissing))
        #expect(refused.encode() == [0x60, 0x04, 0x0B, 0x08])
        #expect(try SecureDFUResponse.decode(refused.encode()) == refused)
        #expect(try SecureDFUResponse.decode([0x60, 0x01, 0x05]).result == .invalidObject)
        #expect(try SecureDFUResponse.decode([0x60, 0x01, 0x42]).result == .unknown(0x42))
    }
}
