import BeaconDelivery
import BeaconModel
import Foundation
import MQTTPublisher

/// A subscriber built on the same libmosquitto client: records every message and connection event.
public final class TestSubscriber: @unchecked Sendable {
    public struct Message: Sendable {
        public var topic: String
        public var payload: String
        public var json: JSONValue? { try? JSONValue(parsing: payload) }
    }

    private let lock = NSLock()
    private var received: [Message] = []
    private var clientEvents: [TransportEvent] = []
    /// SUBACKs received since the last CONNACK (the patterns are subscribed again on every connect).
    private var subscriptionsAcknowledged = 0
    private var client: MQTTClient?
    public let patterns: [String]

    /// - Parameter persistentID: a client id for a persistent session (clean session off), so messages
    ///   published while this subscriber is away (broker restart) are queued for it.
    public init(
        port: Int, patterns: [String], persistentID: String? = nil, settings: MQTTSettings? = nil,
        password: String? = nil
    ) throws {
        self.patterns = patterns
        var mqtt = settings ?? MQTTSettings(host: "127.0.0.1", port: port)
        mqtt.reconnectMin = 0.05
        mqtt.reconnectMax = 0.2
        let options = MQTTClientOptions(
            settings: mqtt, clientID: persistentID ?? "sub-\(UUID().uuidString.prefix(8))",
            password: password, cleanSession: persistentID == nil)
        let patterns = self.patterns
        var created: MQTTClient?
        created = try MQTTClient(options: options) { [weak self] event in
            guard let self else { return }
            switch event {
            case let .message(topic, payload):
                self.lock.withLock {
                    self.received.append(Message(topic: topic, payload: String(decoding: payload, as: UTF8.self)))
                }
            case .connected:
                self.lock.withLock { self.subscriptionsAcknowledged = 0 }
                for pattern in patterns { self.lock.withLock { self.client }?.subscribe(pattern, qos: 1) }
                self.lock.withLock { self.clientEvents.append(event) }
            case .subscribed:
                self.lock.withLock { self.subscriptionsAcknowledged += 1 }
            case .acknowledged: break
            default:
                self.lock.withLock { self.clientEvents.append(event) }
            }
        }
        lock.withLock { client = created }
    }

    /// Starts and waits until the broker has acknowledged every subscription. A fixed pause was used here
    /// before: under load the SUBACK could come later, and a persistent session saved by a broker stopped in
    /// between had no subscription, so messages published after its restart never reached this subscriber.
    public func start() async throws {
        lock.withLock { client }?.start()
        try await waitUntil("subscriber connected and subscribed", timeout: 60) { self.isSubscribed }
    }

    /// Connected, and every pattern acknowledged by the broker on the current connection.
    public var isSubscribed: Bool {
        lock.withLock { clientEvents.contains(.connected) && subscriptionsAcknowledged >= patterns.count }
    }

    public func stop() async { await lock.withLock { client }?.stop() }

    public var messages: [Message] { lock.withLock { received } }
    public var events: [TransportEvent] { lock.withLock { clientEvents } }

    public func messages(under prefix: String) -> [Message] { messages.filter { $0.topic.hasPrefix(prefix) } }

    public func publish(topic: String, payload: String, retain: Bool = false) {
        let current = lock.withLock { client }
        _ = current?.publish(topic: topic, payload: payload, qos: 1, retain: retain)
        current?.flush()
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass (then throws, naming `what`).
public func waitUntil(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
    try await waitUntil(what, timeout: timeout, detail: { "" }, condition)
}

/// As `waitUntil(_:timeout:_:)`; a timeout's error also carries `detail()` (counters, say), so a failure says
/// which side stalled.
public func waitUntil(
    _ what: String, timeout: Double, detail: @Sendable () -> String, _ condition: @Sendable () -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            let state = detail()
            throw TestFailure("timed out after \(timeout) s waiting for \(what)" + (state.isEmpty ? "" : "; \(state)"))
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
