import BeaconDelivery
import Foundation
import MQTTPublisher
import TestSupport
import Testing

/// Issue 17.12: a peer on the broker's port that answers CONNECT with bytes that are not MQTT (here an HTTP
/// error page, as a web server or a proxy on the wrong port would) gives a failure that says what happened,
/// never libmosquitto's "Success (Success)"; the client keeps retrying and never counts itself connected.
@Suite(.serialized) struct GarbageReplyTests {
    static let peer = """
        for _ in range(2):
            conn, _ = server.accept()
            conn.settimeout(60)
            conn.recv(4096)                       # CONNECT
            conn.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\n\\r\\n")
            conn.close()
        """

    @Test func aPeerThatAnswersWithGarbageGivesAClearError() async throws {
        let directory = try TestDirectory.make(prefix: "bb-garbage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let peer = try await PythonPeer.start(script: Self.peer, in: directory)
        defer { peer.stop() }
        let port = peer.port

        let events = EventLog()
        let client = try MQTTClient(
            options: MQTTClientOptions(settings: loopbackSettings(port: port), clientID: "garbage")
        ) {
            events.append($0)
        }
        client.start()
        @Sendable func failures() -> [TransportFailure] {
            events.all.compactMap { event -> TransportFailure? in
                switch event {
                case let .connectionFailed(error, _), let .disconnected(error, _): error
                default: nil
                }
            }
        }
        try await waitUntil("two failed attempts", timeout: 60) { failures().count >= 2 }
        await client.stop()
        print("garbage reply -> \(failures().map(\.description))")
        for failure in failures() {
            #expect(!failure.description.contains("Success"), "\(failure)")
            #expect(!failure.message.isEmpty, "\(failure)")
        }
        #expect(!events.all.contains(.connected))
    }
}
