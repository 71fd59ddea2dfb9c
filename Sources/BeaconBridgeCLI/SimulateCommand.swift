import BeaconCore
#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge simulate --scenario FILE [--seed N] [--summary-only] [--capture OUT]`: runs a scripted scenario through the
/// tracker and region engine; prints every event as one JSON line on stdout, then a `summary` line, and the
/// summary as text on stderr. Exit 0; 64 usage; 66 unreadable file; 65 malformed scenario; 78 invalid settings.
enum SimulateCommand {
    static let usage = """
        Usage: beaconbridge simulate --scenario FILE [--seed N] [--summary-only] [--capture OUT]
          --scenario FILE   scenario (JSON, see docs/scenarios.md)
          --seed N          override the scenario's seed (0...2^64-1)
          --summary-only    print only the summary line, not the events
          --capture OUT     also write the scenario's reports as a btsnoop capture (for replay)
        """

    static func run(_ arguments: [String]) -> Int32 {
        var path: String?
        var seed: UInt64?
        var summaryOnly = false
        var capturePath: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--scenario":
                guard let value = rest.popFirst() else { return usageError("--scenario needs a file") }
                path = value
            case "--seed":
                guard let value = rest.popFirst(), let parsed = UInt64(value) else {
                    return usageError("--seed needs a number 0...18446744073709551615")
                }
                seed = parsed
            case "--summary-only": summaryOnly = true
            case "--capture":
                guard let value = rest.popFirst() else { return usageError("--capture needs a file") }
                capturePath = value
            case "--help", "-h": Output.stdout(usage); return ExitCode.ok
            default: return usageError("unknown argument '\(argument)'")
            }
        }
        guard let path else { return usageError("--scenario FILE is required") }

        let text: String
        switch ScenarioFile.read(path) {
        case let .success(contents): text = contents
        case let .failure(problem):
            Output.stderr("beaconbridge simulate: \(path): \(problem.message)")
            return ExitCode.noInput
        }
        var scenario: Scenario
        do {
            scenario = try Scenario(json: text)
        } catch {
            Output.stderr("beaconbridge simulate: \(path): \(error)")
            return error.kind == .invalid ? ExitCode.config : ExitCode.dataError
        }
        if let seed { scenario.seed = seed }
        if let capturePath, let failed = SimulateCapture.write(scenario, to: capturePath) { return failed }

        let summary = ScenarioRun(scenario).run { event in
            if !summaryOnly { Output.stdout(SimulateEventJSON.encode(event).serialized) }
        }
        Output.stdout(SimulateEventJSON.encode(summary, scenario: scenario).serialized)
        Output.stderr(SimulateEventJSON.text(summary, scenario: scenario))
        return ExitCode.ok
    }

    private static func usageError(_ message: String) -> Int32 {
        Output.stderr("beaconbridge simulate: \(message)\n\n\(usage)")
        return ExitCode.usage
    }
}
