import BeaconFormats
import BeaconModel
import BeaconRuntime
import DeviceProtocols
import ESPHomeProxy
import GATTLink
import GATTTestPeer
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The proxy server with active connections, end to end but for the radio: a client over real TCP, the server's
/// thread and a connection thread per device, `GATTConnection` over a socket pair to the test peripheral's
/// database (`TestGATTServer`, as the QEMU scenario's peripheral serves it), slots from a real `ConnectionSlots`.
/// Through the kernel with aioesphomeapi: the `esphome-gatt` QEMU scenario (docs/testing.md).
@Suite(.serialized) struct ESPHomeActiveConnectionServerTests {
    static let device: UInt64 = 0xC0FF_EE00_0001
    static let identity: ESPHomeDeviceIdentity = {
        var identity = ESPHomeDeviceIdentity(
            name: "hall-pi", friendlyName: "Hall", macAddress: "02:11:22:33:44:55",
            bluetoothMACAddress: "02:11:22:33:44:55", version: "0.1.0", usesPassword: false)
        identity.activeConnections = true
        return identity
    }()

    /// The test peripheral on the far end of a SEQPACKET socket pair, served on a thread of its own until the
    /// connection's end closes (at most 30 s).
    static func peripheral(slots: ConnectionSlots, device: BluetoothAddress, served: ServedCount)
        throws(GATTLinkError) -> GATTConnection
    {
        let slot = try slots.acquire(for: device)
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw GATTLinkError(.system, peer: device.description, step: "socketpair", errno: errno)
        }
        let peerFD = pair[1]
        _ = DedicatedThread.start(name: "bb-test-periph") {
            let socket = L2CAPSocket(adopting: peerFD, peer: "test peripheral")
            var server = TestGATTServer(firmware: "1.2.3-test", battery: 87)
            let deadline = SystemClock.monotonic() + 30
            serving: while SystemClock.monotonic() < deadline {
                switch socket.receive(timeoutMilliseconds: 100) {
                case .timeout: continue
                case .closed: break serving
                case .pdu(let bytes):
                    for pdu in server.handle(bytes) { _ = socket.send(pdu.encode()) }
                }
            }
            socket.close()
            served.value.add(1, ordering: .relaxed)
        }
        let connection = GATTConnection(
            socket: L2CAPSocket(adopting: pair[0], peer: device.description), slot: slot, requestTimeout: 2)
        try connection.perform(.exchangeMTU)
        return connection
    }

    final class Bench: Sendable {
        let slots = ConnectionSlots(limit: 2)
        let served = ServedCount()
        let server: ESPHomeProxyServer

        init(open: Bool = true) throws {
            var configuration = ESPHomeProxyServer.Configuration(
                bind: "127.0.0.1", port: 0, session: .init(identity: ESPHomeActiveConnectionServerTests.identity),
                allow: ["127.0.0.0/8"].compactMap(NetworkAddressRange.init), maxClients: 4,
                clientQueueBytes: 256 * 1024, batchInterval: 0.05)
            var active = ESPHomeProxyServer.ActiveConnections(
                adapter: .index(57), slots: slots, connectTimeout: 2, requestTimeout: 2)
            if open {
                let slots = slots
                let served = served
                active.open = { device, _ throws(GATTLinkError) in
                    try ESPHomeActiveConnectionServerTests.peripheral(slots: slots, device: device, served: served)
                }
            }
            configuration.activeConnections = active
            server = ESPHomeProxyServer(configuration: configuration)
            try server.start()
        }

        func client() throws -> ESPHomeTestClient {
            let client = try ESPHomeTestClient(port: server.port)
            var hello = ProtobufWriter()
            hello.string(1, "test")
            client.send(ESPHomeMessageType.helloRequest, hello.bytes)
            _ = try client.fields(ESPHomeMessageType.helloResponse)
            return client
        }

        /// Polls (bounded) until the pool has `free` slots.
        func waitForFree(_ free: Int, timeout: Double = 10) async -> Bool {
            let deadline = SystemClock.monotonic() + timeout
            while slots.free != free, SystemClock.monotonic() < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return slots.free == free
        }
    }

    /// One service's characteristics as (uuid halves, value handle, properties, descriptor (uuid, handle)s).
    typealias Listed = (uuid: [UInt64], handle: UInt64, properties: UInt64, descriptors: [([UInt64], UInt64)])

    static func characteristics(_ body: [UInt8]) throws -> [Listed] {
        var out: [Listed] = []
        for case let (2, .bytes(service)) in try ESPHomeTestClient.all(body[...]) {
            for case let (3, .bytes(characteristic)) in try ESPHomeTestClient.all(service) {
                let fields = try ESPHomeTestClient.all(characteristic)
                var listed: Listed = ([], 0, 0, [])
                for (field, value) in fields {
                    switch field {
                    case 1: listed.uuid = ESPHomeTestClient.packed(value)
                    case 2: listed.handle = value.integer
                    case 3: listed.properties = value.integer
                    case 4:
                        guard case let .bytes(descriptor) = value else { continue }
                        let inner = try ESPHomeTestClient.fields(Array(descriptor))
                        listed.descriptors.append((ESPHomeTestClient.packed(inner[1]), inner[2]?.integer ?? 0))
                    default: break
                    }
                }
                out.append(listed)
            }
        }
        return out
    }

    static func halves16(_ short: UInt64) -> [UInt64] { [short << 32 | 0x1000, 0x8000_0080_5F9B_34FB] }
    static let custom: [UInt64] = [0x6E4A_0002_8F7B_4C8E, 0x9D15_3B1E_2C0A_7F10]

    @Test func connectDiscoverReadWriteNotifyAndDisconnectThroughTheProxy() async throws {
        let bench = try Bench()
        let client = try bench.client()
        client.send(ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest)
        let initial = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        #expect(initial[1]?.integer == 2 && initial[2]?.integer == 2 && initial[3] == nil)

        let device = Self.device
        client.send(
            ESPHomeMessageType.bluetoothDeviceRequest, ESPHomeTestClient.deviceRequest(device, kind: 5, addressType: 0))
        let connected = try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(connected[1]?.integer == device && connected[2]?.integer == 1 && connected[3]?.integer == 247)
        let taken = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        #expect(taken[1]?.integer == 1 && ESPHomeTestClient.packed(taken[3]) == [device])
        #expect(bench.slots.free == 1)

        // Services: one response per service, then the done message.
        client.send(ESPHomeMessageType.bluetoothGATTGetServicesRequest, ESPHomeTestClient.handleRequest(device, 0))
        var listed: [Listed] = []
        var responses = 0
        while let body = try client.next(ESPHomeMessageType.bluetoothGATTGetServicesResponse, timeout: 1) {
            listed += try Self.characteristics(body)
            responses += 1
        }
        #expect(try client.next(ESPHomeMessageType.bluetoothGATTGetServicesDoneResponse) != nil)
        #expect(responses == 3)
        let battery = try #require(listed.first { $0.uuid == Self.halves16(0x2A19) })
        let firmware = try #require(listed.first { $0.uuid == Self.halves16(0x2A26) })
        let writable = try #require(listed.first { $0.uuid == Self.custom })
        let cccd = try #require(writable.descriptors.first { $0.0 == Self.halves16(0x2902) })

        // Reads by handle.
        client.send(
            ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeTestClient.handleRequest(device, battery.handle))
        let read = try client.fields(ESPHomeMessageType.bluetoothGATTReadResponse)
        #expect(read[2]?.integer == battery.handle && read[3] == .bytes([87][...]))
        client.send(
            ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeTestClient.handleRequest(device, firmware.handle))
        #expect(
            try client.fields(ESPHomeMessageType.bluetoothGATTReadResponse)[3] == .bytes(Array("1.2.3-test".utf8)[...]))

        // Notifications: the client writes the CCCD and asks for them; a write comes back as a notification.
        client.send(
            ESPHomeMessageType.bluetoothGATTWriteDescriptorRequest,
            ESPHomeTestClient.handleRequest(device, cccd.1, data: [1, 0]))
        #expect(try client.fields(ESPHomeMessageType.bluetoothGATTWriteResponse)[2]?.integer == cccd.1)
        client.send(
            ESPHomeMessageType.bluetoothGATTNotifyRequest,
            ESPHomeTestClient.handleRequest(device, writable.handle, flag: true))
        #expect(try client.fields(ESPHomeMessageType.bluetoothGATTNotifyResponse)[2]?.integer == writable.handle)
        client.send(
            ESPHomeMessageType.bluetoothGATTWriteRequest,
            ESPHomeTestClient.handleRequest(device, writable.handle, flag: true, data: [0xCA, 0xFE]))
        #expect(try client.fields(ESPHomeMessageType.bluetoothGATTWriteResponse)[2]?.integer == writable.handle)
        let notified = try client.fields(ESPHomeMessageType.bluetoothGATTNotifyDataResponse)
        #expect(notified[2]?.integer == writable.handle && notified[3] == .bytes([0xCA, 0xFE][...]))

        // The device's ATT error passes through: a read of a handle it lacks, a write it does not permit.
        client.send(ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeTestClient.handleRequest(device, 0x0FFF))
        let missing = try client.fields(ESPHomeMessageType.bluetoothGATTErrorResponse)
        #expect(missing[2]?.integer == 0x0FFF && missing[3]?.integer == 0x01)
        client.send(
            ESPHomeMessageType.bluetoothGATTWriteRequest,
            ESPHomeTestClient.handleRequest(device, battery.handle, flag: true, data: [1]))
        #expect(try client.fields(ESPHomeMessageType.bluetoothGATTErrorResponse)[3]?.integer == 0x03)
        // A device this client holds no connection to.
        client.send(ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeTestClient.handleRequest(0x1234, 3))
        #expect(
            try client.fields(ESPHomeMessageType.bluetoothGATTErrorResponse)[3]?.integer
                == UInt64(ESPHomeBluetoothError.notConnected))

        // Disconnect: answered once the link is down, the slot free and the subscriber told.
        client.send(ESPHomeMessageType.bluetoothDeviceRequest, ESPHomeTestClient.deviceRequest(device, kind: 1))
        let ended = try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(ended[1]?.integer == device && ended[2] == nil && ended[4] == nil)
        let freed = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        #expect(freed[1]?.integer == 2 && freed[3] == nil)
        #expect(bench.slots.free == 2)
        client.close()
        await bench.server.stop()
    }

    @Test func aClientThatGoesAwayFreesEveryConnectionItOpened() async throws {
        let bench = try Bench()
        let watcher = try bench.client()
        watcher.send(ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest)
        _ = try watcher.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        let client = try bench.client()
        for address in [Self.device, Self.device + 1] {
            client.send(
                ESPHomeMessageType.bluetoothDeviceRequest,
                ESPHomeTestClient.deviceRequest(address, kind: 4, addressType: 1))
            #expect(try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)[2]?.integer == 1)
        }
        #expect(bench.slots.free == 0)
        // The pool is full: a third device is refused with no resources, by the other client too.
        watcher.send(
            ESPHomeMessageType.bluetoothDeviceRequest,
            ESPHomeTestClient.deviceRequest(Self.device + 2, kind: 5, addressType: 0))
        let refusal = try watcher.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(refusal[2] == nil && refusal[4]?.integer == UInt64(ESPHomeBluetoothError.noResources))
        // The client drops its API connection: both links close and the watcher sees the slots come back.
        client.close()
        #expect(await bench.waitForFree(2))
        var frees: [UInt64] = []
        while let body = try watcher.next(ESPHomeMessageType.bluetoothConnectionsFreeResponse, timeout: 2) {
            frees.append(try ESPHomeTestClient.fields(body)[1]?.integer ?? 0)
        }
        #expect(frees.last == 2, "\(frees)")
        #expect(await eventually { bench.served.value.load(ordering: .relaxed) == 2 })
        await bench.server.stop()
    }

    @Test func aConnectThatFailsAnswersTheErrorFreesTheSlotAndAdvertisementsKeepFlowing() async throws {
        // No opener: the real connect, on an adapter that does not exist (hci57).
        let bench = try Bench(open: false)
        let client = try bench.client()
        var subscribe = ProtobufWriter()
        subscribe.uint(1, 1)
        client.send(ESPHomeMessageType.subscribeBluetoothLEAdvertisementsRequest, subscribe.bytes)
        client.send(ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest)
        _ = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        let advertising: [UInt8] = [
            0x3E, 0x1A, 0x02, 0x01, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x0E, 0x02, 0x01, 0x06, 0x0A,
            0xFF, 0x4C, 0x00, 0x10, 0x05, 0x01, 0x18, 0x00, 0x00, 0x00, 0xC4,
        ]
        bench.server.submit(CapturedHCIEvent(timestamp: 1, bytes: advertising))
        _ = try client.next(0xFFFF, timeout: 0.5)
        let before = client.advertisementMessages
        #expect(before >= 1)
        client.send(
            ESPHomeMessageType.bluetoothDeviceRequest,
            ESPHomeTestClient.deviceRequest(Self.device, kind: 5, addressType: 0))
        let failed = try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(failed[2] == nil && failed[4]?.integer == UInt64(ESPHomeBluetoothError.failedToEstablish))
        #expect(try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)[1]?.integer == 2)
        #expect(bench.slots.free == 2)
        bench.server.submit(CapturedHCIEvent(timestamp: 2, bytes: advertising))
        _ = try client.next(0xFFFF, timeout: 0.5)
        #expect(client.advertisementMessages > before)
        client.close()
        await bench.server.stop()
    }
}

/// Peripherals served to their end.
final class ServedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Polls `condition` every 20 ms for at most `timeout` seconds.
func eventually(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = SystemClock.monotonic() + timeout
    while !condition(), SystemClock.monotonic() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    return condition()
}
