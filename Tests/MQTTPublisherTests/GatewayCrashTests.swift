import BeaconDelivery
import BeaconEvents
import Foundation
import MQTTPublisher
import SQLiteStore
import TestSupport
import Testing

/// `kill -9` of a process that publishes while the broker is unreachable, then a fresh publisher on the same
/// database file delivers the whole backlog, in order.
///
/// The crashing process is this test binary itself, re-run with `BB_CRASH_CHILD_DB` set so that only
/// `crashChildFillsTheOutbox` runs in it (that test is skipped in a normal run).
@Suite(.serialized) struct GatewayCrashTests {
    static let childEnvironment = "BB_CRASH_CHILD_DB"
    static let eventCount = 600

    static func layout() -> TopicLayout { TopicLayout(settings: TopicSettings(), gatewayID: "crashgw") }

    @Test(.timeLimit(.minutes(2))) func backlogSurvivesKillDashNine() async throws {
        let directory = try TestDirectory.make(prefix: "bb-crash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/outbox.sqlite"
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = try ChildProcess(
            executable, ["--testing-library", "swift-testing", "--filter", "crashChildFillsTheOutbox"],
            environment: [GatewayCrashTests.childEnvironment: path])
        let ready = path + ".ready"
        try await waitUntil("child filled the outbox", timeout: 60) {
            FileManager.default.fileExists(atPath: ready) || !child.isRunning
        }
        #expect(child.isRunning, "the child must still be running when killed")
        kill(child.pid, SIGKILL)
        let status = child.wait()
        #expect(status & 0x7F == SIGKILL)

        let published = try String(contentsOfFile: ready, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(published.count == GatewayCrashTests.eventCount)

        let broker = try MosquittoProcess()
        try await broker.start()
        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/crashgw/#"])
        try await subscriber.start()
        let database = try GatewayDatabase(settings: OutboxSettings(path: path))
        #expect(try await database.stats().rows == GatewayCrashTests.eventCount)
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: broker.port), layout: GatewayCrashTests.layout()),
            outbox: database)
        try await withRunningPublisher(publisher) {
            try await waitUntil("backlog delivered", timeout: 60) {
                subscriber.messages.filter { $0.json?["id"] != nil }.count >= published.count
            }
            try await waitUntil("outbox emptied", timeout: 60) { publisher.counters.backlogRows == 0 }
        }
        await subscriber.stop()
        let received = subscriber.messages.compactMap { $0.json?["id"]?.string }
        #expect(received == published)
        // The restarted gateway continues the sequence where the reserved blocks ended: no id is reused.
        let next = try await database.reserveSequences(1)
        let highest = published.compactMap { UInt64($0.split(separator: "-").last ?? "") }.max() ?? 0
        #expect(next.next > highest)
    }

    /// Runs only in the child process: publishes with no broker reachable, so everything goes to the outbox,
    /// then reports the event ids and waits to be killed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[GatewayCrashTests.childEnvironment] != nil))
    func crashChildFillsTheOutbox() async throws {
        let path = try #require(ProcessInfo.processInfo.environment[GatewayCrashTests.childEnvironment])
        let database = try GatewayDatabase(settings: OutboxSettings(path: path))
        let deadPort = try FreePort.find()
        let publisher = try EventPublisher(
            configuration: .init(mqtt: loopbackSettings(port: deadPort), layout: GatewayCrashTests.layout()),
            outbox: database)
        var encoder = SequencedEncoder(layout: GatewayCrashTests.layout(), database: database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await publisher.run() }
            var ids: [String] = []
            for index in 0..<GatewayCrashTests.eventCount {
                let event =
                    index % 2 == 0
                    ? EventFactory.region(index % 10, kind: .enter) : EventFactory.presence(index % 10, state: .seen)
                let envelopes = try await encoder.encode([event])
                ids += envelopes.map(\.id)
                publisher.publish(envelopes)
            }
            let expected = ids.count
            try await waitUntil("outbox holds the backlog", timeout: 60) { publisher.counters.backlogRows == expected }
            try ids.joined(separator: "\n").write(toFile: path + ".ready", atomically: true, encoding: .utf8)
            try await Task.sleep(for: .seconds(60))  // killed long before this ends
            group.cancelAll()
        }
        Issue.record("the parent should have killed this process")
    }
}
