import BeaconModel
import BeaconRuntime
import DeviceProtocols
import GATTLink
import GATTTestPeer
import Synchronization
import Testing

/// The real driver (`GATTConnection` over `L2CAPSocket`) against a peer on a socket pair: the test peripheral's
/// database, and hostile peers that stall, flood, send malformed ATT or close mid-procedure. Each ends with a
/// clear error naming the step, the socket closed and the slot free.
@Suite(.serialized) struct GATTConnectionTests {
    static let device = BluetoothAddress(string: "AA:BB:CC:DD:EE:FF")!

    @Test func readsByUUIDFromTheTestPeripheral() async throws {
        let peer = try ScriptedPeer.serving(firmware: "1.2.3-test", battery: 87)
        let connection = peer.connection()
        let mtu = try connection.perform(.exchangeMTU)
        #expect(mtu == .mtu(247))
        #expect(try connection.read(.uuid16(0x2A26)) == Array("1.2.3-test".utf8))
        #expect(try connection.read(.uuid16(0x2A19)) == [87])
        let all = try connection.discoverAll()
        #expect(all.map(\.0.uuid) == [.uuid16(0x180A), .uuid16(0x180F), TestGATTServer.customService])
        #expect(all.last?.1.map(\.uuid) == [TestGATTServer.customCharacteristic])
        connection.close()
        #expect(await peer.finished.wait() ?? 0 >= 5)
    }

    @Test func writeThenReceiveTheNotificationOfTheNewValue() async throws {
        let peer = try ScriptedPeer.serving()
        let connection = peer.connection()
        try connection.perform(.exchangeMTU)
        var notifications: [GATTConnection.Notification] = []
        connection.onNotification = { notifications.append($0) }
        let characteristic = try connection.subscribe(TestGATTServer.customCharacteristic)
        try connection.write(TestGATTServer.customCharacteristic, value: [0xCA, 0xFE])
        try connection.waitForNotifications(until: SystemClock.monotonic() + 30) { !notifications.isEmpty }
        #expect(
            notifications == [.init(handle: characteristic.valueHandle, value: [0xCA, 0xFE], isIndication: false)])
        #expect(try connection.read(TestGATTServer.customCharacteristic) == [0xCA, 0xFE])
        connection.close()
        _ = await peer.finished.wait()
    }

    @Test func aCharacteristicTheDeviceLacksIsNotFound() async throws {
        let peer = try ScriptedPeer.serving()
        let connection = peer.connection()
        #expect(throws: GATTLinkError(.notFound(.uuid16(0x2A00)), peer: connection.peer, step: "find 2a00")) {
            try connection.read(.uuid16(0x2A00))
        }
        #expect(!connection.isClosed)
        connection.close()
        _ = await peer.finished.wait()
    }

    @Test func aStalledPeerTimesOutAndFreesTheSlot() async throws {
        let slots = ConnectionSlots(limit: 1)
        let peer = try ScriptedPeer { _ in .ignore }
        let connection = peer.connection(slot: try slots.acquire(for: Self.device), requestTimeout: 0.3)
        #expect(slots.free == 0)
        let error = try #require(throws: GATTLinkError.self) { try connection.read(.uuid16(0x2A19)) }
        #expect(error.kind == .gatt(.timeout(.discoverServices)))
        #expect(error.step == "discoverServices")
        #expect(connection.isClosed)
        // After a timeout the bearer is closed: later procedures fail at once.
        #expect(throws: GATTLinkError.self) { try connection.perform(.exchangeMTU) }
        connection.close()
        #expect(slots.free == 1)
        #expect(await peer.finished.wait() == 1)
    }

    @Test func aPeerFloodingNotificationsStillTimesOut() async throws {
        let peer = try ScriptedPeer { _ in .reply(Array(repeating: [0x1B, 0x03, 0x00, 0x01], count: 200)) }
        let connection = peer.connection(requestTimeout: 0.3)
        var count = 0
        connection.onNotification = { _ in count += 1 }
        let error = try #require(throws: GATTLinkError.self) { try connection.perform(.read(handle: 3)) }
        #expect(error.kind == .gatt(.timeout(.read)))
        #expect(count == 200)
        connection.close()
        _ = await peer.finished.wait()
    }

    @Test func aMalformedResponseNamesTheStep() async throws {
        // An Exchange MTU Response cut after one byte of its MTU.
        let peer = try ScriptedPeer { _ in .reply([[0x03, 0x17]]) }
        let connection = peer.connection()
        let error = try #require(throws: GATTLinkError.self) { try connection.perform(.exchangeMTU) }
        guard case .gatt(.malformedResponse(.exchangeMTU, _)) = error.kind else {
            Issue.record("expected a malformed exchangeMTU response, got \(error)")
            return
        }
        #expect("\(error)".hasPrefix("AA:BB:CC:DD:EE:FF: exchangeMTU: exchangeMTU: malformed response"))
        // The link stays usable: the next request gets its own (equally malformed) answer.
        #expect(throws: GATTLinkError.self) { try connection.perform(.exchangeMTU) }
        connection.close()
        _ = await peer.finished.wait()
    }

    @Test func aPeerClosingMidProcedureIsADisconnectAndFreesTheSlot() async throws {
        let slots = ConnectionSlots()
        let server = Mutex(TestGATTServer(firmware: "x", battery: 1))
        // Answers service discovery (both pages), then closes on the first characteristic discovery request.
        let peer = try ScriptedPeer { bytes in
            bytes.first == ATTOpcode.readByTypeRequest
                ? .close : .reply(server.withLock { $0.handle(bytes) }.map { $0.encode() })
        }
        do {
            let connection = peer.connection(slot: try slots.acquire(for: Self.device))
            let error = try #require(throws: GATTLinkError.self) { try connection.read(.uuid16(0x2A26)) }
            #expect(error.kind == .disconnected)
            #expect(error.step == "discoverCharacteristics")
            #expect(connection.isClosed)
            #expect(slots.free == 2)
        }
        // The connection is gone: its slot with it, without close().
        #expect(slots.free == 3)
        #expect(await peer.finished.wait() == 3)
    }

    @Test func aPeersRequestsAreAnsweredWithRequestNotSupported() async throws {
        let answers = Mutex<[[UInt8]]>([])
        // Asks the client a Read Request of its own before answering ours.
        let peer = try ScriptedPeer { bytes in
            if bytes.first == 0x01 {
                answers.withLock { $0.append(bytes) }
                return .ignore
            }
            return .reply([[0x0A, 0x01, 0x00], [0x03, 0xF7, 0x00]])
        }
        let connection = peer.connection()
        #expect(try connection.perform(.exchangeMTU) == .mtu(247))
        // The peer sends nothing after our answer, so each wait is short (a pump returns at its deadline, not when
        // the peer's thread records the answer): at most 30 s in all, about 0.1 s in a passing run.
        let deadline = SystemClock.monotonic() + 30
        while answers.withLock({ $0.isEmpty }) && SystemClock.monotonic() < deadline {
            try connection.waitForNotifications(until: SystemClock.monotonic() + 0.1) {
                answers.withLock { !$0.isEmpty }
            }
        }
        #expect(answers.withLock { $0 } == [[0x01, 0x0A, 0x00, 0x00, 0x06]])
        connection.close()
        _ = await peer.finished.wait()
    }
}
