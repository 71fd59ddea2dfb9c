import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// A broker that requires TLS with a client certificate signed by the test CA, and a password.
@Suite(.serialized) struct TLSTests {
    let pki: TestPKI
    let broker: MosquittoProcess

    init() async throws {
        pki = try TestPKI()
        broker = try MosquittoProcess(extraConfig: pki.brokerConfig, allowAnonymous: false)
        try await broker.start()
    }

    func settings(caFile: String? = nil, passwordFile: String? = nil) -> MQTTSettings {
        var settings = MQTTSettings(
            host: "127.0.0.1", port: broker.port, username: TestPKI.username,
            passwordFile: passwordFile ?? pki.directory + "/password.txt", keepalive: 10,
            tls: MQTTTLSSettings(caFile: caFile ?? pki.caCert, certFile: pki.clientCert, keyFile: pki.clientKey),
            reconnectMin: 0.1, reconnectMax: 0.3)
        settings.clientID = "tls-\(UUID().uuidString.prefix(6))"
        return settings
    }

    @Test func clientCertificateAndPasswordConnectAndDeliver() async throws {
        let subscriberSettings = settings()
        #expect(subscriberSettings.validate().isEmpty)
        let password = try MQTTCredentials.password(for: subscriberSettings)
        #expect(password == TestPKI.password)
        let tlsSubscriber = try TestSubscriber(
            port: broker.port, patterns: ["beaconbridge/#"], settings: subscriberSettings,
            password: password)
        try await tlsSubscriber.start()

        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "tlsgw")
        let publisherSettings = settings()
        let publisher = try EventPublisher(
            configuration: .init(
                mqtt: publisherSettings, password: try MQTTCredentials.password(for: publisherSettings),
                layout: layout),
            outbox: nil)
        var encoder = SequencedEncoder(layout: layout, database: nil)
        try await withRunningPublisher(publisher) {
            try await waitUntil("TLS publisher connected", timeout: 60) { publisher.counters.connected }
            publisher.publish(
                try await encoder.encode([EventFactory.region(1, kind: .enter), EventFactory.presence(1, state: .seen)])
            )
            try await waitUntil("events over TLS", timeout: 60) {
                tlsSubscriber.messages.filter { $0.json?["kind"] != nil }.count == 2
            }
        }
        await tlsSubscriber.stop()
        #expect(publisher.counters.connectionFailures == 0)
    }

    /// Issue 17, item 12: a plain client against the TLS port is told to set mqtt.tls, and never reads
    /// "Success (Success)".
    @Test func aPlainClientAgainstATLSPortIsToldToSetTLS() async throws {
        let events = EventLog()
        var plain = settings()
        plain.tls = nil
        let client = try MQTTClient(
            options: MQTTClientOptions(settings: plain, clientID: "plain", password: TestPKI.password)
        ) {
            events.append($0)
        }
        client.start()
        try await waitUntil("two failed attempts", timeout: 60) { events.failures.count >= 2 }
        await client.stop()
        print("plain client against TLS -> \(events.failures[0])")
        for failure in events.failures {
            #expect(failure.description.contains("is it a TLS port? set mqtt.tls"), "\(failure)")
            #expect(!failure.description.contains("Success"), "\(failure)")
        }
        #expect(!events.all.contains(.connected))
    }

    @Test func wrongPasswordIsAClearErrorAndIsRetried() async throws {
        let events = EventLog()
        var wrong = settings()
        wrong.passwordFile = nil
        let client = try MQTTClient(
            options: MQTTClientOptions(settings: wrong, clientID: "wrong-pw", password: "not-it")
        ) {
            events.append($0)
        }
        client.start()
        try await waitUntil("two refused attempts", timeout: 60) { events.failures.count >= 2 }
        await client.stop()
        print("wrong password -> \(events.failures[0])")
        for failure in events.failures {
            #expect(failure.isRefused, "\(failure)")
            #expect(failure.description.contains("not authori"), "\(failure)")
            #expect(!failure.description.contains("not-it"), "the password must never appear in errors")
        }
        #expect(events.all.last == .stopped)
        #expect(!events.all.contains(.connected))
    }

    @Test func unknownCertificateAuthorityIsAClearErrorAndIsRetried() async throws {
        let events = EventLog()
        let client = try MQTTClient(
            options: MQTTClientOptions(
                settings: settings(caFile: pki.otherCACert), clientID: "bad-ca",
                password: TestPKI.password)
        ) { events.append($0) }
        client.start()
        try await waitUntil("two failed TLS attempts", timeout: 60) { events.failures.count >= 2 }
        await client.stop()
        print("unknown CA -> \(events.failures[0])")
        for failure in events.failures {
            #expect(failure.isTLS, "\(failure)")
            #expect(failure.description.contains("certificate verify failed"), "\(failure)")
        }
        #expect(!events.all.contains(.connected))
    }

    @Test func missingPasswordFileIsAClearError() {
        let error = #expect(throws: MQTTError.self) {
            try MQTTCredentials.password(for: settings(passwordFile: pki.directory + "/nope.txt"))
        }
        #expect(error?.description.contains("nope.txt") == true)
    }
}

/// Client events collected from the network thread.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [TransportEvent] = []
    func append(_ event: TransportEvent) { lock.withLock { events.append(event) } }
    var all: [TransportEvent] { lock.withLock { events } }
    var failures: [TransportFailure] {
        all.compactMap { if case let .connectionFailed(error, _) = $0 { error } else { nil } }
    }
}
