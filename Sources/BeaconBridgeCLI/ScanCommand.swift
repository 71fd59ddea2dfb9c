import BeaconFormats
import BeaconModel
import BeaconRuntime
import HCIScanner
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge scan`: scans one adapter and prints one line per raw LE advertising event
/// (capture time, then the HCI event bytes in hex), for diagnostics. Notices go to stderr.
enum ScanCommand {
    static let usage = """
        Usage: beaconbridge scan [--adapter hci0|N|AA:BB:CC:DD:EE:FF] [--seconds N] [--record FILE] [--passive]
                                 [--extended auto|on|off] [--interval-ms MS] [--window-ms MS]
                                 [--stall-timeout S] [--queue N] [--replay FILE [--speed X]] [--json]
        Prints one line per LE advertising event: <unix time> <event bytes hex>, or with --json one JSON
        object per advertising report (decoded as `beaconbridge decode` does). Stops after N seconds
        (default: on SIGINT/SIGTERM). --replay reads a btsnoop capture instead of the adapter.
        """

    struct Options {
        var settings = ScannerSettings()
        var seconds: Double?
        var json = false
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        switch parse(arguments) {
        case let .success(parsed): options = parsed
        case let .failure(message):
            Output.stderr("beaconbridge scan: \(message)\n\n\(usage)")
            return ExitCode.usage
        }
        if arguments.contains("--help") {
            Output.stdout(usage)
            return ExitCode.ok
        }
        let issues = options.settings.validate(path: "scan")
        guard issues.isEmpty else {
            for issue in issues { Output.stderr("beaconbridge scan: \(issue)") }
            return ExitCode.usage
        }
        return AsyncMain.block { await scan(options) }
    }

    enum ParseResult {
        case success(Options)
        case failure(String)
    }

    static func parse(_ arguments: [String]) -> ParseResult {
        var options = Options()
        var index = 0
        func value(_ flag: String) -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        while index < arguments.count {
            let flag = arguments[index]
            switch flag {
            case "--help": break
            case "--json": options.json = true
            case "--passive": options.settings.active = false
            case "--active": options.settings.active = true
            case "--adapter", "-i":
                guard let text = value(flag) else { return .failure("\(flag) needs a value") }
                options.settings.adapter = text
            case "--seconds":
                guard let text = value(flag), let seconds = Double(text), seconds > 0, seconds.isFinite else {
                    return .failure("--seconds needs a positive number")
                }
                options.seconds = seconds
            case "--record":
                guard let text = value(flag), !text.isEmpty else { return .failure("--record needs a file") }
                options.settings.record = text
            case "--extended":
                guard let text = value(flag), let mode = ScannerSettings.ExtendedScanning(rawValue: text) else {
                    return .failure("--extended takes auto, on or off")
                }
                options.settings.extended = mode
            case "--interval-ms", "--window-ms", "--stall-timeout", "--queue":
                guard let text = value(flag), let number = Double(text) else {
                    return .failure("\(flag) needs a number")
                }
                switch flag {
                case "--interval-ms": options.settings.intervalMilliseconds = number
                case "--window-ms": options.settings.windowMilliseconds = number
                case "--stall-timeout": options.settings.stallTimeoutSeconds = number
                default:
                    guard let capacity = Int(exactly: number) else { return .failure("--queue needs a whole number") }
                    options.settings.queueCapacity = capacity
                }
            case "--replay":
                guard let text = value(flag), !text.isEmpty else { return .failure("--replay needs a file") }
                options.settings.source = .replay(path: text)
            case "--speed":
                guard let text = value(flag), let speed = Double(text) else {
                    return .failure("--speed needs a number")
                }
                options.settings.replaySpeed = speed
            default:
                return .failure("unknown option '\(flag)'")
            }
            index += 1
        }
        if options.settings.record != nil, case .replay = options.settings.source {
            return .failure("--record records a live adapter, not a replay")
        }
        return .success(options)
    }

    static func scan(_ options: Options) async -> Int32 {
        let settings = options.settings
        let source: any HCIEventSource
        do {
            source = try settings.makeSource { notice in Output.stderr("beaconbridge scan: \(notice)") }
        } catch {
            Output.stderr("beaconbridge scan: cannot record: \(error)")
            return ExitCode.cantCreate
        }
        let stream: AsyncStream<CapturedHCIEvent>
        do {
            stream = try await source.events()
        } catch {
            Output.stderr("beaconbridge scan: \(error)")
            return ExitCode.forSourceFailure(error)
        }
        // One service group: SIGINT/SIGTERM or the deadline stop the source, whose end ends the printing.
        let printer = Printer(stream: stream, json: options.json)
        var services: [any Service] = [printer, StopOnlyService("source") { source.stop() }]
        if let seconds = options.seconds {
            // At most ten years: a larger --seconds would overflow the duration.
            let duration = Duration.milliseconds(Int64(min(seconds, 315_360_000) * 1000))
            services.append(TaskService("deadline") { try? await Task.sleep(for: duration) })
        }
        _ = await ServiceGroup(services).run()
        let printed = printer.printed
        let stats = source.statistics
        Output.stderr(
            "beaconbridge scan: \(printed) advertising events, \(stats.dropped) dropped, "
                + "\(stats.scanRestarts) scan restarts, \(stats.adapterPowerCycles) power cycles, "
                + "\(stats.adapterReopens) reopens")
        if let recorder = (source as? HCIScanner)?.recorder as? BTSnoopFileRecorder {
            Output.stderr(
                "beaconbridge scan: \(recorder.records) records written to \(recorder.path)"
                    + (recorder.failure.map { ", recording stopped: \($0)" } ?? ""))
        }
        if let failure = source.failure {
            Output.stderr("beaconbridge scan: \(failure)")
            return failure is ReplaySource.Failure ? ExitCode.forSourceFailure(failure) : ExitCode.ioError
        }
        return ExitCode.ok
    }

    /// Unix seconds with microseconds, e.g. `1764500000.123456`.
    static func format(_ time: Timestamp) -> String {
        guard time.isFinite else { return "?" }
        let micros = Int64((time * 1_000_000).rounded())
        let fraction = String(abs(micros % 1_000_000))
        return "\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// Prints every advertising event of the stream until it ends (the source stopped or finished).
    final class Printer: Service {
        let name = "printer"
        let stream: AsyncStream<CapturedHCIEvent>
        let json: Bool
        private let count = Atomic<Int>(0)

        init(stream: AsyncStream<CapturedHCIEvent>, json: Bool) {
            self.stream = stream
            self.json = json
        }

        var printed: Int { count.load(ordering: .relaxed) }

        func run() async {
            let decoder = BeaconDecoder()
            for await event in stream where event.isAdvertisingReport {
                count.add(1, ordering: .relaxed)
                guard json else {
                    await Output.line("\(format(event.timestamp)) \(HexText.hex(event.bytes))")
                    continue
                }
                do {
                    for report in try HCIEventParser.parse(event.bytes, timestamp: event.timestamp) {
                        var members: [(String, JSONValue)] = [("time", .double(report.timestamp))]
                        if case let .object(decoded) = decoder.decode(report).json(includeReport: true) {
                            members += decoded
                        }
                        await Output.line(JSONValue.object(members).serialized)
                    }
                } catch {
                    await Output.line(
                        JSONValue.object([
                            ("time", .double(event.timestamp)), ("event", .string(HexText.hex(event.bytes))),
                            ("error", .string("\(error)")),
                        ]).serialized)
                }
            }
        }

        /// Nothing: the source's stop (before this one) ends the stream.
        func stop() async {}
    }
}
