import BeaconConfig
import BeaconDelivery
import SQLiteStore

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge outbox [--config FILE] [--limit N] [--requeue]`: what the outbox holds, and the events the
/// broker refused (the dead-letter table, docs/outbox.md). `--requeue` moves the dead letters back into the
/// outbox, to be sent again in sequence order by the running (or next) gateway.
enum OutboxCommand {
    static let help = """
        Usage: beaconbridge outbox [--config FILE] [--limit N] [--requeue]

        Prints the outbox's backlog and its dead letters: events the broker refused (MQTT 5 reason code,
        larger than the broker's maximum packet size, or a connection closed right after them, repeatedly),
        moved aside so the events behind them flow. One line each: seq, time, topic, attempts, reason.
        --limit N    show at most N dead letters (default 50)
        --requeue    move every dead letter back into the outbox to be sent again
        Exit codes: 0 ok, 64 usage, 66 no outbox database at the configured path, 74 database error,
        78 invalid configuration.
        """

    struct Options: Sendable {
        var limit = 50
        var requeue = false
    }

    static func run(_ arguments: [String]) -> Int32 {
        let command: ConfigCommandLine
        switch ConfigCommandLine.parse(
            arguments, command: "outbox", help: help, flags: ["--requeue"], valued: ["--limit"],
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): command = parsed
        case .exit(let code): return code
        }
        let location = command.location
        var options = Options()
        options.requeue = command.flags.contains("--requeue")
        if let text = command.values["--limit"] {
            guard let limit = Int(text), limit >= 0 else {
                return ConfigCommandLine.badValue("--limit needs a count (0 or more)", command: "outbox", help: help)
            }
            options.limit = limit
        }
        let configuration: GatewayConfiguration
        switch location.load(command: "outbox", hostEnvironment: nil) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        let path = configuration.outbox.path
        guard access(path, F_OK) == 0 else {
            Output.stderr(
                "beaconbridge outbox: no outbox database at \(path) (outbox.path in \(location.path)); "
                    + "the gateway creates it on its first run")
            return ExitCode.noInput
        }
        let chosen = options
        return AsyncMain.block { await report(configuration.outbox, options: chosen) }
    }

    static func report(_ settings: OutboxSettings, options: Options) async -> Int32 {
        do {
            let database = try await GatewayDatabase.open(settings: settings)
            if options.requeue {
                let moved = try await database.requeueDeadLetters()
                await Output.line("requeued \(moved) dead letter\(moved == 1 ? "" : "s") into the outbox")
            }
            let stats = try await database.stats()
            await Output.line(
                "\(settings.path): \(stats.rows) event\(stats.rows == 1 ? "" : "s") waiting (\(stats.bytes) bytes), "
                    + "\(stats.deadLetters) dead letter\(stats.deadLetters == 1 ? "" : "s")")
            for letter in try await database.deadLetters(limit: options.limit) {
                let envelope = letter.envelope
                await Output.line(
                    "  seq=\(envelope.sequence) time=\(LogfmtHandler.timestamp(epoch: letter.time)) kind=\(envelope.kind.rawValue) "
                        + "topic=\(envelope.topic) bytes=\(envelope.payloadSize) attempts=\(letter.attempts) "
                        + "reason=\"\(letter.reason)\"")
            }
            if stats.deadLetters > options.limit {
                await Output.line("  ... \(stats.deadLetters - options.limit) more (--limit N)")
            }
            return ExitCode.ok
        } catch {
            await Output.line("beaconbridge outbox: \(settings.path): \(error)", to: 2)
            return ExitCode.ioError
        }
    }
}
