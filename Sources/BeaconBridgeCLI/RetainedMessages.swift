import BeaconConfig
import BeaconDelivery
import BeaconModel
import BeaconRuntime
import MQTTPublisher
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the broker holds retained on some topic filters, read by a short-lived subscriber with the gateway's
/// own broker settings: the status commands (`rooms status`, `devices status`) are built on it.
enum RetainedMessages {
    /// What the client's callbacks hand over (its network thread) to the waiting task.
    struct Received: Sendable {
        var connected = false
        var failure: String?
        var subscribed = 0
        var subscribedAt: Double?
        var messages: [InboundMessage] = []
    }

    /// Messages kept at most.
    static let maxMessages = 10_000

    /// What a status command (`<group> status [--config FILE] [--wait S]`) was given, loaded and checked.
    struct StatusRequest {
        var configuration: GatewayConfiguration
        /// The configuration file read.
        var path: String
        var password: String?
        /// Seconds to wait at most for the broker and the retained messages (default 5).
        var wait: Double
    }

    /// Parses `status [--config FILE] [--wait S]` for the command group (`rooms`, `devices`), loads the
    /// configuration and reads the broker password; prints the problem and throws the exit status otherwise.
    static func statusRequest(_ arguments: [String], group: String, help: String) throws(ExitStatus) -> StatusRequest {
        let name = group + " status"
        guard arguments.first == "status" else {
            Output.stderr(
                "beaconbridge \(group): a subcommand is required (\(group == "rooms" ? "status, train, forget" : "status"))\n\n\(help)"
            )
            throw ExitStatus(arguments.contains("--help") || arguments.contains("-h") ? ExitCode.ok : ExitCode.usage)
        }
        let command: ConfigCommandLine
        switch ConfigCommandLine.parse(
            Array(arguments.dropFirst()), command: name, help: help, valued: ["--wait"],
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): command = parsed
        case .exit(let code): throw ExitStatus(code)
        }
        var wait = 5.0
        if let text = command.values["--wait"] {
            guard let value = Double(text), value.isFinite, value > 0, value <= 600 else {
                throw ExitStatus(ConfigCommandLine.badValue("--wait needs seconds (0-600)", command: name, help: help))
            }
            wait = value
        }
        let configuration: GatewayConfiguration
        switch command.location.load(command: name, hostEnvironment: nil) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): throw ExitStatus(exitCode)
        }
        return StatusRequest(
            configuration: configuration, path: command.location.path,
            password: try password(configuration, command: name), wait: wait)
    }

    /// The broker password from the configuration's file or environment variable; when it cannot be read, says
    /// why on stderr (naming `command`) and throws the exit status (78).
    static func password(_ configuration: GatewayConfiguration, command: String) throws(ExitStatus) -> String? {
        do {
            let environment = ProcessEnvironment.current()
            return try MQTTCredentials.password(for: configuration.mqtt, environment: { environment[$0] })
        } catch {
            Output.stderr("beaconbridge \(command): \(error)")
            throw ExitStatus(ExitCode.config)
        }
    }

    /// A command's short-lived broker session: the client with the gateway's own broker settings and what its
    /// callbacks recorded (`record`). The status commands read retained messages through it; `rooms train` and
    /// `rooms forget` also publish their command and wait for the reply on it.
    final class Session: Sendable {
        let client: MQTTClient
        let received: Recorded

        /// What the client's network thread recorded, in a box of its own: the client's event closure holds it,
        /// not the session (which holds the client).
        final class Recorded: Sendable {
            let state = Mutex(Received())
            var value: Received { state.withLock { $0 } }
        }

        /// Creates the client (`<clientPrefix>-<gateway id>-<pid>`) and starts it; prints why and returns the
        /// exit status (78) when the client cannot be set up.
        static func start(
            _ configuration: GatewayConfiguration, password: String?, clientPrefix: String, command: String
        ) -> Result<Session, ExitStatus> {
            let received = Recorded()
            do {
                let client = try MQTTClient(
                    options: MQTTClientOptions(
                        settings: configuration.mqtt,
                        clientID: "\(clientPrefix)-\(configuration.gateway.id)-\(getpid())", password: password)
                ) { event in received.state.withLock { record(event, into: &$0) } }
                client.start()
                return .success(Session(client: client, received: received))
            } catch {
                Output.stderr("beaconbridge \(command): \(error)")
                return .failure(ExitStatus(ExitCode.config))
            }
        }

        private init(client: MQTTClient, received: Recorded) {
            self.client = client
            self.received = received
        }

        /// Subscribes to `filters` once connected and waits for their acknowledgements and a short grace for the
        /// retained messages that follow them, at most `wait` seconds. Returns 69 after printing why when the
        /// broker cannot be reached; nil otherwise (also when the time ran out: the caller checks `received`).
        func settle(filters: [String], wait: Double, command: String) async -> Int32? {
            let deadline = SystemClock.monotonic() + wait
            var subscribed = false
            while SystemClock.monotonic() < deadline {
                let state = received.value
                if let failure = state.failure, !state.connected {
                    Output.stderr("beaconbridge \(command): cannot reach the broker: \(failure)")
                    return ExitCode.unavailable
                }
                if state.connected, !subscribed {
                    for filter in filters { client.subscribe(filter, qos: 1) }
                    subscribed = true
                }
                // Retained messages follow each SUBACK: a short grace after the last one.
                if state.subscribed >= filters.count, let at = state.subscribedAt, SystemClock.monotonic() - at >= 0.5 {
                    return nil
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }
    }

    /// Subscribes to `filters`, waits for their acknowledgements and a short grace for the retained messages
    /// that follow them, at most `wait` seconds in all. Returns the messages, or the exit code after printing
    /// why (69: broker unreachable or silent, 78: the client could not be set up).
    static func read(
        _ configuration: GatewayConfiguration, password: String?, filters: [String], wait: Double, command: String
    ) async -> Result<[InboundMessage], ExitStatus> {
        let session: Session
        switch Session.start(configuration, password: password, clientPrefix: "beaconbridge-status", command: command)
        {
        case .success(let started): session = started
        case .failure(let status): return .failure(status)
        }
        let outcome = await session.settle(filters: filters, wait: wait, command: command)
        await session.client.stop()
        if let outcome { return .failure(ExitStatus(outcome)) }
        let state = session.received.value
        guard state.connected else {
            Output.stderr("beaconbridge \(command): no answer from the broker within \(wait) s")
            return .failure(ExitStatus(ExitCode.unavailable))
        }
        if state.subscribed < filters.count {
            Output.stderr("beaconbridge \(command): the broker did not acknowledge the subscriptions within \(wait) s")
        }
        return .success(state.messages)
    }

    /// A client event into what the waiting task reads: the connection, a failure before it, acknowledged
    /// subscriptions, and at most `maxMessages` messages.
    static func record(_ event: TransportEvent, into state: inout Received) {
        switch event {
        case .connected: state.connected = true
        case let .connectionFailed(error, _): if !state.connected { state.failure = "\(error)" }
        case .subscribed:
            state.subscribed += 1
            state.subscribedAt = SystemClock.monotonic()
        case let .message(topic, payload):
            if state.messages.count < maxMessages {
                state.messages.append(InboundMessage(topic: topic, payload: payload))
            }
        default: break
        }
    }

    /// An exit code as an error.
    struct ExitStatus: Error {
        var code: Int32
        init(_ code: Int32) { self.code = code }
    }
}
