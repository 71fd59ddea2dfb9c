import BeaconCore
import BeaconRuntime
import MQTTPublisher
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge rooms status [--config FILE] [--wait S]`: connects to the configured broker as a subscriber,
/// reads the gateways' retained availability and the leader's retained calibration (`<prefix>/rooms/calibration`,
/// docs/rooms.md "Self-calibration"), and prints a table per gateway.
enum RoomsCommand {
    static let help = """
        Usage: beaconbridge rooms status [--config FILE] [--wait S]

        Connects to the configured broker, reads the site's retained gateway availability and self-calibration,
        and prints one line per gateway: room, online, receive and transmit offsets (dB), uncertainty (dB),
        confidence (0-1), pairs, samples; then who published the calibration and when.
        --wait S     wait at most S seconds for the broker and the retained messages (default 5)
        Exit codes: 0 ok, 64 usage, 69 broker unreachable, 78 invalid configuration.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.first == "status" else {
            Output.stderr("beaconbridge rooms: a subcommand is required (status)\n\n\(help)")
            return arguments.contains("--help") || arguments.contains("-h") ? ExitCode.ok : ExitCode.usage
        }
        let command: ConfigCommandLine
        switch ConfigCommandLine.parse(
            Array(arguments.dropFirst()), command: "rooms status", help: help, valued: ["--wait"],
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): command = parsed
        case .exit(let code): return code
        }
        var wait = 5.0
        if let text = command.values["--wait"] {
            guard let value = Double(text), value.isFinite, value > 0, value <= 600 else {
                return ConfigCommandLine.badValue("--wait needs seconds (0-600)", command: "rooms status", help: help)
            }
            wait = value
        }
        let configuration: GatewayConfiguration
        switch command.location.load(command: "rooms status", hostEnvironment: nil) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        let password: String?
        do {
            let environment = ProcessEnvironment.current()
            password = try MQTTCredentials.password(for: configuration.mqtt, environment: { environment[$0] })
        } catch {
            Output.stderr("beaconbridge rooms status: \(error)")
            return ExitCode.config
        }
        let chosen = wait
        return AsyncMain.block { await status(configuration, password: password, wait: chosen) }
    }

    /// What the client's callbacks hand over (its network thread) to the waiting task.
    struct Received: Sendable {
        var connected = false
        var failure: String?
        var subscribed = 0
        var subscribedAt: Double?
        var messages: [InboundMessage] = []
    }

    static func status(_ configuration: GatewayConfiguration, password: String?, wait: Double) async -> Int32 {
        let topics = RoomTopics(prefix: configuration.topics.prefix)
        let received = Mutex(Received())
        let client: MQTTClient
        do {
            client = try MQTTClient(
                options: MQTTClientOptions(
                    settings: configuration.mqtt,
                    clientID: "beaconbridge-status-\(configuration.gateway.id)-\(getpid())", password: password)
            ) { event in
                received.withLock { state in
                    switch event {
                    case .connected: state.connected = true
                    case let .connectionFailed(error, _): if !state.connected { state.failure = "\(error)" }
                    case .subscribed:
                        state.subscribed += 1
                        state.subscribedAt = SystemClock.monotonic()
                    case let .message(topic, payload):
                        if state.messages.count < 10_000 {
                            state.messages.append(InboundMessage(topic: topic, payload: payload))
                        }
                    default: break
                    }
                }
            }
        } catch {
            Output.stderr("beaconbridge rooms status: \(error)")
            return ExitCode.config
        }
        client.start()
        let deadline = SystemClock.monotonic() + wait
        var subscribed = false
        var outcome: Int32?
        while outcome == nil, SystemClock.monotonic() < deadline {
            let state = received.withLock { $0 }
            if let failure = state.failure, !state.connected {
                Output.stderr("beaconbridge rooms status: cannot reach the broker: \(failure)")
                outcome = ExitCode.unavailable
                break
            }
            if state.connected, !subscribed {
                client.subscribe(topics.availabilityFilter, qos: 1)
                client.subscribe(topics.calibration, qos: 1)
                subscribed = true
            }
            // Retained messages follow each SUBACK: a short grace after the second one.
            if state.subscribed >= 2, let at = state.subscribedAt, SystemClock.monotonic() - at >= 0.5 { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        await client.stop()
        if let outcome { return outcome }
        let state = received.withLock { $0 }
        guard state.connected else {
            Output.stderr("beaconbridge rooms status: no answer from the broker within \(wait) s")
            return ExitCode.unavailable
        }
        var report = RoomsStatus(topics: topics, rooms: configuration.rooms.gatewayRooms(own: configuration.gateway))
        for message in state.messages { report.take(message) }
        if state.subscribed < 2 {
            Output.stderr(
                "beaconbridge rooms status: the broker did not acknowledge the subscriptions within \(wait) s")
        }
        await Output.line(report.table(now: SystemClock.realtime()))
        return ExitCode.ok
    }
}
