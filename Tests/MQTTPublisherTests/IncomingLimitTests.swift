import BeaconDelivery
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// Issue 17.9: libmosquitto reads whatever packet length a broker declares (up to 256 MiB) into memory. A
/// hostile peer on loopback accepts the connection and then declares a 255 MiB PUBLISH and streams it: the
/// client cuts it off after about `MQTTClient.maxIncomingPacket` bytes and drops the connection with an error
/// that says so (the daemon logs it as a lost connection), so memory stays bounded by the limit.
@Suite(.serialized) struct IncomingLimitTests {
    static let peer = """
        import time
        conn, _ = server.accept()
        server.close()
        conn.settimeout(60)
        conn.recv(4096)                           # CONNECT
        conn.sendall(bytes([0x20, 2, 0, 0]))      # CONNACK: accepted (MQTT 3.1.1)
        declared = 255 * 1024 * 1024
        length, n = b"", declared
        while True:
            byte, n = n % 128, n // 128
            length += bytes([byte | (0x80 if n else 0)])
            if not n:
                break
        sent = 0
        try:
            conn.sendall(bytes([0x30]) + length + b"\\x00\\x01t")
            chunk = bytes(65536)
            while sent < declared:
                conn.sendall(chunk)
                sent += len(chunk)
                time.sleep(0.001)                 # paced (~64 MB/s): the client checks between reads
        except OSError:
            pass
        with open(sys.argv[2], "w") as f:
            f.write(str(sent))
        """

    @Test func aPeerDeclaringAHugePacketIsCutOffAndTheConnectionDropped() async throws {
        let directory = try TestDirectory.make(prefix: "bb-hostile")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sentFile = directory + "/sent"
        let peer = try await PythonPeer.start(script: Self.peer, in: directory, arguments: [sentFile])
        defer { peer.stop() }
        let port = peer.port

        let events = EventLog()
        let client = try MQTTClient(
            options: MQTTClientOptions(settings: loopbackSettings(port: port), clientID: "victim")
        ) {
            events.append($0)
        }
        client.start()
        @Sendable func cutOff() -> TransportFailure? {
            events.all.lazy.compactMap { event -> TransportFailure? in
                if case let .disconnected(error, _) = event, error.message.contains("larger than") {
                    error
                } else {
                    nil
                }
            }.first
        }
        try await waitUntil("the connection dropped for the oversized packet", timeout: 60) { cutOff() != nil }
        await client.stop()
        #expect(await peer.exited(within: 60))
        let sent = try #require(Int(try String(contentsOfFile: sentFile, encoding: .utf8)))
        let error = try #require(cutOff())
        print("hostile peer: 255 MiB declared, \(sent) bytes sent before the client dropped it: \(error)")
        #expect(events.all.contains(.connected))
        #expect(error.description.contains("larger than \(MQTTClient.maxIncomingPacket) bytes"), "\(error)")
        // What the client can hold is bounded by what arrived: the limit plus socket buffers, not 255 MiB.
        #expect(sent < 32 << 20, "\(sent) bytes sent")
    }
}
