import BeaconModel
import Foundation
import TestSupport
import Testing

/// Issue 12's leftover: the leading gateway publishes the room states again to a broker restarted WITHOUT
/// persistence (docs/rooms.md, "After losing the broker"). The built binary replays gw-a's capture of a tag at
/// rest in room a (`simulate --capture` on Tests/Fixtures/rooms/at-rest.json, 1,200 s at speed 1: the replay
/// outlasts every deadline here) with `rooms.enabled`, to a real mosquitto on a free port. Once its room state is
/// announced, the gateway is frozen (SIGSTOP), the broker restarted on the same port without persistence, and a
/// probe shows the broker has no room state any more; thawed, the gateway reconnects and must put the state back:
/// the same decision number, `from` null (a snapshot, no new decision), retained (a later probe gets it).
/// The freeze also makes the reconnect one the daemon loop may not see go down (its look at the connection comes
/// once a second): the gateway's second own `online` shows it (RoomConnectionTests). Waits on conditions, 60-120 s deadlines; every failure
/// message carries the gateway's telemetry counters, its log and the broker's, so it says which side stalled.
@Suite(.serialized) struct RoomsBrokerRestartTests {
    static let scenario = BuiltBinary.packageRoot + "/Tests/Fixtures/rooms/at-rest.json"

    /// Every retained message under `beaconbridge/` on the broker now: a fresh subscriber's messages before its
    /// own marker, which the broker sends after the retained messages of the subscription made before it.
    static func retained(port: Int) async throws -> [TestSubscriber.Message] {
        let probe = try TestSubscriber(port: port, patterns: ["beaconbridge/#"])
        try await probe.start()
        defer { Task { await probe.stop() } }
        let marker = "beaconbridge/probe/\(UUID().uuidString)"
        probe.publish(topic: marker, payload: "marker")
        try await waitUntil("the probe's marker", timeout: 60) { probe.messages.contains { $0.topic == marker } }
        return Array(probe.messages.prefix { $0.topic != marker })
    }

    static func text(_ value: JSONValue) -> String {
        switch value {
        case let .int(v): "\(v)"
        case let .double(v): "\(v)"
        case let .bool(v): "\(v)"
        case let .string(v): v
        default: "\(value)"
        }
    }

    static func roomStates(_ messages: [TestSubscriber.Message]) -> [JSONValue] {
        messages.compactMap { message in
            guard message.topic.hasPrefix("beaconbridge/rooms/"), let json = message.json,
                json["event"] == .string("room")
            else { return nil }
            return json
        }
    }

    @Test func theLeaderPutsTheRoomStatesBackOnABrokerRestartedWithoutPersistence() async throws {
        let directory = try TestDirectory.make(prefix: "bb-rooms-restart")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try MosquittoProcess()
        try await broker.start()
        defer { broker.stop() }
        let simulate = try await BuiltBinary.run([
            "simulate", "--scenario", Self.scenario, "--capture", directory + "/{gateway}.btsnoop",
        ])
        try #require(simulate.status == 0, "stderr: \(simulate.stderr)")

        let subscriber = try TestSubscriber(port: broker.port, patterns: ["beaconbridge/#"])
        try await subscriber.start()
        defer { Task { await subscriber.stop() } }
        let path = directory + "/gw-a.yaml"
        try RoomsSite.config("gw-a", gateways: ["gw-a": "a", "gw-b": "b"], directory: directory, port: broker.port)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let gateway = try DaemonProcess(arguments: [
            "replay", directory + "/gw-a.btsnoop", "--config", path, "--speed", "1",
        ])
        defer {
            gateway.signal(SIGCONT)
            gateway.signal(SIGKILL)
        }
        // What each side was doing, for every failure message.
        let diagnostics: @Sendable () -> String = {
            var counters = "none"
            if case let .object(pairs)? =
                subscriber.messages.last(where: { $0.topic == "beaconbridge/gw-a/telemetry" })?.json?["counters"]
            {
                let shown = pairs.filter {
                    $0.0.hasPrefix("rooms_") || ["connects", "published", "queued"].contains($0.0)
                }
                counters = shown.map { "\($0.0)=\(Self.text($0.1))" }.joined(separator: " ")
            }
            let rooms = subscriber.messages.filter { $0.topic.hasPrefix("beaconbridge/rooms/") }.map(\.payload)
            return """
                gw-a running: \(gateway.isRunning); its last telemetry counters: \(counters)
                subscriber events: \(subscriber.events)
                room messages seen: \(rooms.suffix(8).joined(separator: "\n"))
                gw-a stderr (tail):
                \(gateway.stderr.split(separator: "\n").suffix(25).joined(separator: "\n"))
                broker log (tail):
                \(broker.log.split(separator: "\n").suffix(15).joined(separator: "\n"))
                """
        }
        // A wait that also ends, failing, when gw-a is gone (it must run until the end).
        func wait(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
            do { try await waitUntil(what, timeout: timeout) { condition() || !gateway.isRunning } } catch {
                throw TestFailure("\(error)\n\(diagnostics())")
            }
            guard condition() else { throw TestFailure("gw-a exited waiting for \(what)\n\(diagnostics())") }
        }

        // The first decision: the tag in room a, announced by gw-a.
        try await wait("gw-a's first room state", timeout: 120) { !Self.roomStates(subscriber.messages).isEmpty }
        let first = try #require(Self.roomStates(subscriber.messages).first)
        #expect(first["room"] == .string("a") && first["gateway"] == .string("gw-a"), "\(diagnostics())")
        let decision = try #require(first["decision"], "\(diagnostics())")
        let before = Self.roomStates(try await Self.retained(port: broker.port))
        #expect(before.map { $0["decision"] } == [decision], "retained before the restart\n\(diagnostics())")

        // Frozen gateway, broker restarted without persistence on the same port: nothing retained is left.
        gateway.signal(SIGSTOP)
        broker.stop()
        try await broker.start()
        let afterRestart = try await Self.retained(port: broker.port)
        #expect(Self.roomStates(afterRestart).isEmpty, "the restarted broker kept a room state\n\(diagnostics())")
        #expect(!afterRestart.contains { $0.topic == "beaconbridge/gw-a/availability" }, "\(diagnostics())")
        try await wait("the subscriber back on the broker", timeout: 60) {
            subscriber.events.filter { $0 == .connected }.count >= 2
        }
        let seenBefore = subscriber.messages.count

        // Thawed: gw-a reconnects, leads again and publishes the state again, retained, as it was.
        gateway.signal(SIGCONT)
        try await wait("gw-a's room state again after the restart", timeout: 120) {
            !Self.roomStates(Array(subscriber.messages.dropFirst(seenBefore))).isEmpty
        }
        let again = Self.roomStates(Array(subscriber.messages.dropFirst(seenBefore)))
        #expect(again.map { $0["decision"] } == [decision], "no new decision, the same number\n\(diagnostics())")
        #expect(again.first?["room"] == .string("a") && again.first?["from"] == .null, "\(diagnostics())")
        let back = Self.roomStates(try await Self.retained(port: broker.port))
        #expect(back.map { $0["decision"] } == [decision], "retained on the broker again\n\(diagnostics())")
        #expect(back.first?["room"] == .string("a"), "\(diagnostics())")
        try await wait("gw-a's log of the republish", timeout: 60) {
            gateway.stderr.contains("room states published again after reconnecting")
        }
        // Its telemetry after the restart: leading again, and still one decision published in all.
        let leading: @Sendable (TestSubscriber.Message) -> Bool = { message in
            message.topic == "beaconbridge/gw-a/telemetry" && message.json?["counters"]?["rooms_leader"] == .int(1)
        }
        try await wait("gw-a's telemetry leading again after the restart", timeout: 60) {
            subscriber.messages.dropFirst(seenBefore).contains(where: leading)
        }
        let counters = subscriber.messages.dropFirst(seenBefore).last(where: leading)?.json?["counters"]
        #expect(counters?["rooms_published"] == .int(1), "\(diagnostics())")
    }
}
