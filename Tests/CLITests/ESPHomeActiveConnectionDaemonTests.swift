import DeviceProtocols
import Foundation
import TestSupport
import Testing

/// `esphome_api` with `gatt.enabled` in the built binary, against a real mosquitto, with no device reachable (the
/// scanner's adapter is one that does not exist; the replay scans nothing live): the proxy advertises active
/// connections, a connect to the absent device is answered with an error and gives its slot back, a device
/// outside `gatt.allowed_devices` is refused, and the capture's advertisements keep streaming to the client and
/// its events to MQTT meanwhile. (A real device through the kernel: the `esphome-gatt` QEMU scenario.)
@Suite struct ESPHomeActiveConnectionDaemonTests {
    static let allowed: UInt64 = 0xC0FF_EE00_0001

    @Test func connectToAnAbsentDeviceAnswersAnErrorAndFreesTheSlotWhileAdvertisementsStream() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        let port = try FreePort.find()
        try bed.writeConfig(
            """
            scanner:
              adapter: hci57
            gatt:
              enabled: true
              slots: 2
              connect_timeout_s: 2
              allowed_devices: [C0:FF:EE:00:00:01]
            esphome_api:
              enabled: true
              bind: 127.0.0.1
              port: \(port)
              mdns: false
            """)
        let now = Date().timeIntervalSince1970
        let capture = try bed.writeCapture(
            "walk.btsnoop", DaemonTestBed.iBeaconObservations(minor: 1, start: now, duration: 60, interval: 0.25))
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }
        let daemon = try DaemonProcess(arguments: ["replay", capture, "--speed", "1", "--config", bed.configPath])
        try await waitUntil("the proxy listens", timeout: 60) { daemon.stderr.contains("ESPHome API listening") }

        let client = try ESPHomeTestClient(port: port)
        var hello = ProtobufWriter()
        hello.string(1, "daemon test")
        client.send(ESPHomeMessageType.helloRequest, hello.bytes)
        _ = try client.fields(ESPHomeMessageType.helloResponse)
        client.send(ESPHomeMessageType.deviceInfoRequest)
        let flags = try client.fields(ESPHomeMessageType.deviceInfoResponse)[15]?.integer ?? 0
        #expect(flags & 0b110 == 0b110, "active connections and remote caching: \(flags)")
        var subscribe = ProtobufWriter()
        subscribe.uint(1, 1)
        client.send(ESPHomeMessageType.subscribeBluetoothLEAdvertisementsRequest, subscribe.bytes)
        client.send(ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest)
        let initial = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        #expect(initial[1]?.integer == 2 && initial[2]?.integer == 2, "\(initial)")
        _ = try client.next(0xFFFF, timeout: 2)
        let before = client.advertisementMessages
        #expect(before >= 1, "advertisements before the connect")

        // The absent device: the connect fails (no adapter hci57), answered with an error; the slot comes back.
        client.send(
            ESPHomeMessageType.bluetoothDeviceRequest,
            ESPHomeTestClient.deviceRequest(Self.allowed, kind: 5, addressType: 0))
        let failed = try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse, timeout: 20)
        #expect(failed[1]?.integer == Self.allowed && failed[2] == nil)
        #expect(failed[4]?.integer == UInt64(ESPHomeBluetoothError.failedToEstablish), "\(failed)")
        let freed = try client.fields(ESPHomeMessageType.bluetoothConnectionsFreeResponse)
        #expect(freed[1]?.integer == 2 && freed[3] == nil, "\(freed)")
        // A device outside gatt.allowed_devices: refused without a connect.
        client.send(
            ESPHomeMessageType.bluetoothDeviceRequest,
            ESPHomeTestClient.deviceRequest(Self.allowed + 8, kind: 5, addressType: 0))
        let refused = try client.fields(ESPHomeMessageType.bluetoothDeviceConnectionResponse)
        #expect(refused[4]?.integer == UInt64(ESPHomeBluetoothError.notAvailable), "\(refused)")
        // A read on the device that is not connected.
        client.send(ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeTestClient.handleRequest(Self.allowed, 3))
        let notConnected = try client.fields(ESPHomeMessageType.bluetoothGATTErrorResponse)
        #expect(notConnected[3]?.integer == UInt64(ESPHomeBluetoothError.notConnected))

        // Advertisements kept streaming, and events kept reaching the broker.
        _ = try client.next(0xFFFF, timeout: 2)
        #expect(client.advertisementMessages > before)
        let sightings = subscriber.messages(under: "\(bed.topicBase)/sighting/").count
        try await waitUntil("more sightings on MQTT", timeout: 30) {
            subscriber.messages(under: "\(bed.topicBase)/sighting/").count > sightings
        }
        #expect(daemon.stderr.contains("msg=\"client's connect refused\""), "stderr: \(daemon.stderr)")
        client.close()
        daemon.signal(SIGTERM)
        let status = await daemon.waitForExit(timeout: 60)
        #expect(status == 0, "stderr: \(daemon.stderr)")
        #expect(daemon.stderr.contains("gatt_connects=1"), "stderr: \(daemon.stderr)")
    }
}
