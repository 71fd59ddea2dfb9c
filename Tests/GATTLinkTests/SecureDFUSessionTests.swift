import BeaconRuntime
import GATTLink
import GATTTestPeer
import SecureDFU
import Synchronization
import Testing

/// `SecureDFUSession` (the driver of `beaconbridge gatt dfu`) against the test peripheral's DFU target
/// (`TestGATTServer` + `TestDFUTarget`, as `beaconbridge-testpeer --dfu` serves it) over socket pairs: a whole
/// transfer, a dropped link resumed on a new connection, the version check, a target refusing the image.
@Suite struct SecureDFUSessionTests {
    /// The target's state across connections, as the test peripheral keeps it; each connection gets a peer.
    final class Device: Sendable {
        let target: Mutex<TestDFUTarget>
        let firmware: String
        /// Close the link once, after this many image bytes arrived.
        let dropAfter: Int?
        let dropped = Mutex(false)
        let connections = Mutex(0)
        let peers = Mutex<[ScriptedPeer]>([])

        init(target: TestDFUTarget, firmware: String = "1.2.3-test", dropAfter: Int? = nil) {
            self.target = Mutex(target)
            self.firmware = firmware
            self.dropAfter = dropAfter
        }

        func connect() throws(GATTLinkError) -> GATTConnection {
            connections.withLock { $0 += 1 }
            let server = Mutex(TestGATTServer(firmware: firmware, battery: 87, dfuTarget: target.withLock { $0 }))
            let peer: ScriptedPeer
            do {
                peer = try ScriptedPeer { bytes in
                    let replies = server.withLock { $0.handle(bytes) }
                    let state = server.withLock { $0.dfuTarget! }
                    self.target.withLock { $0 = state }
                    if let limit = self.dropAfter, state.dataBytesReceived >= limit,
                        self.dropped.withLock({ dropped in
                            defer { dropped = true }
                            return !dropped
                        })
                    {
                        return .close
                    }
                    return .reply(replies.map { $0.encode() })
                }
            } catch {
                throw GATTLinkError(.system, peer: "test peer", step: "socketpair")
            }
            peers.withLock { $0.append(peer) }
            let connection = peer.connection()
            do {
                try connection.perform(.exchangeMTU)
            } catch {
                connection.close()
                throw error
            }
            return connection
        }
    }

    static func package(size: Int, version: UInt32 = 5) -> DFUPackage {
        var state: UInt32 = 11
        let image = (0..<size).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        return DFUPackage(initPacket: TestInitPacket.bytes(version: version, applicationSize: size), firmware: image)
    }

    static func options() -> SecureDFUSession.Options {
        var options = SecureDFUSession.Options()
        options.responseTimeout = 2
        return options
    }

    @Test func transfersAnImageWithIncreasingProgress() throws {
        let package = Self.package(size: 9_000)
        let device = Device(target: TestDFUTarget(expectedCRC: package.firmwareCRC32))
        var events: [SecureDFUSession.Event] = []
        let session = SecureDFUSession(package: package, options: Self.options(), sleep: { _ in })
        let outcome = try session.run(connect: device.connect) { events.append($0) }
        guard case .completed(let done) = outcome else {
            Issue.record("expected completion, got \(outcome)")
            return
        }
        #expect(done.bytes == 9_000)
        #expect(done.percent == 100)
        let target = device.target.withLock { $0 }
        #expect(target.imageAccepted)
        #expect(target.acceptedCRC == package.firmwareCRC32)
        #expect(target.dataBytesReceived == 9_000)
        let percents = events.compactMap { event -> Int? in
            if case .progress(let progress) = event { return progress.percent }
            return nil
        }
        // After each executed object of 1,024 bytes but the last (that one completes the transfer).
        #expect(percents.count == 8)
        #expect(percents == percents.sorted())
        #expect(events.first == .connected(attempt: 0, mtu: 247))
        #expect(events.contains(.installedVersion(nil)))
        #expect(device.connections.withLock { $0 } == 1)
    }

    @Test func aDroppedLinkReconnectsAndResumes() throws {
        let package = Self.package(size: 9_000)
        let device = Device(target: TestDFUTarget(expectedCRC: package.firmwareCRC32), dropAfter: 3_500)
        var events: [SecureDFUSession.Event] = []
        var slept: [Double] = []
        let session = SecureDFUSession(package: package, options: Self.options(), sleep: { slept.append($0) })
        let outcome = try session.run(connect: device.connect) { events.append($0) }
        guard case .completed(let done) = outcome else {
            Issue.record("expected completion, got \(outcome)")
            return
        }
        #expect(done.bytes == 9_000)
        let target = device.target.withLock { $0 }
        #expect(target.imageAccepted)
        #expect(target.acceptedCRC == package.firmwareCRC32)
        // Resumed, not restarted: the init packet was created once, and at most one object was sent again.
        #expect(target.commandCreates == 1)
        #expect(target.dataBytesReceived < 9_000 + 1_024)
        #expect(device.connections.withLock { $0 } == 2)
        #expect(events.contains { if case .reconnecting(1, 1, _) = $0 { return true } else { return false } })
        #expect(events.contains(.connected(attempt: 1, mtu: 247)))
        #expect(slept == [1])
    }

    @Test func aDeviceAtThePackagesVersionIsSkippedUnlessForced() throws {
        let package = Self.package(size: 2_000, version: 5)
        let device = Device(target: TestDFUTarget(expectedCRC: nil), firmware: "5")
        let session = SecureDFUSession(package: package, options: Self.options(), sleep: { _ in })
        #expect(try session.run(connect: device.connect) { _ in } == .upToDate(5))
        #expect(device.target.withLock { $0 }.commandCreates == 0)
        // An older package is refused after the version is known.
        let older = Device(target: TestDFUTarget(expectedCRC: nil), firmware: "7")
        #expect(
            throws: SecureDFUSession.Failure.transfer(
                .invalidPackage(.validatePackage, [.versionNotNewer(installed: 7, package: 5)]))
        ) {
            try session.run(connect: older.connect) { _ in }
        }
        var forced = Self.options()
        forced.force = true
        let outcome = try SecureDFUSession(package: package, options: forced, sleep: { _ in }).run(
            connect: device.connect
        ) { _ in }
        guard case .completed = outcome else {
            Issue.record("expected completion, got \(outcome)")
            return
        }
        #expect(device.target.withLock { $0 }.imageAccepted)
    }

    @Test func aTargetRefusingTheImageEndsWithItsTypedError() throws {
        let package = Self.package(size: 3_000)
        let device = Device(target: TestDFUTarget(expectedCRC: package.firmwareCRC32 ^ 1))
        let session = SecureDFUSession(package: package, options: Self.options(), sleep: { _ in })
        #expect(throws: SecureDFUSession.Failure.transfer(.target(.executeData, .extendedError(.hashFailed)))) {
            try session.run(connect: device.connect) { _ in }
        }
        #expect(!device.target.withLock { $0 }.imageAccepted)
    }

    @Test func aDeviceWithoutTheDFUServiceIsNamed() throws {
        let package = Self.package(size: 1_000)
        let peer = try ScriptedPeer.serving()
        let session = SecureDFUSession(package: package, options: Self.options(), sleep: { _ in })
        let connect = { () throws(GATTLinkError) -> GATTConnection in peer.connection() }
        #expect(
            throws: SecureDFUSession.Failure.link(
                GATTLinkError(
                    .notFound(SecureDFUProtocol.controlPoint), peer: "AA:BB:CC:DD:EE:FF",
                    step: "find \(SecureDFUProtocol.controlPoint)"))
        ) {
            try session.run(connect: connect) { _ in }
        }
    }
}
