/// The command line of the commands that read the configuration file (`check-config`, `keys check`,
/// `outbox`), parsed one way for all: `--config FILE` / `--config=FILE` / `-c FILE` (else
/// `$BEACONBRIDGE_CONFIG`, else the default path: `ConfigLocation`), `--help` / `-h` anywhere (help on
/// stdout, exit 0), the command's flags and options with a value; anything else is a usage error (the
/// message and the help on stderr, exit 64).
struct ConfigCommandLine {
    var location: ConfigLocation
    var flags: Set<String> = []
    var values: [String: String] = [:]

    enum Outcome {
        case parsed(ConfigCommandLine)
        /// Help or a usage error was printed: exit with this code.
        case exit(Int32)
    }

    static func parse(
        _ arguments: [String], command: String, help: String, flags: [String] = [],
        valued: [String] = [], environment: [String: String]
    ) -> Outcome {
        var rest = arguments
        if rest.contains("--help") || rest.contains("-h") {
            Output.stdout(help)
            return .exit(ExitCode.ok)
        }
        func usage(_ message: String) -> Outcome {
            Output.stderr("beaconbridge \(command): \(message)\n\n\(help)")
            return .exit(ExitCode.usage)
        }
        let location: ConfigLocation
        switch ConfigLocation.extract(from: &rest, environment: environment) {
        case .success(let found): location = found
        case .failure(let problem): return usage(problem.message)
        }
        var parsed = ConfigCommandLine(location: location)
        var index = 0
        while index < rest.count {
            let argument = rest[index]
            if flags.contains(argument) {
                parsed.flags.insert(argument)
            } else if valued.contains(argument) {
                guard index + 1 < rest.count, !rest[index + 1].isEmpty else {
                    return usage("\(argument) needs a value")
                }
                parsed.values[argument] = rest[index + 1]
                index += 1
            } else {
                return usage("unexpected argument '\(argument)'")
            }
            index += 1
        }
        return .parsed(parsed)
    }

    /// Prints a usage error for a value that did not parse; returns the usage exit code.
    static func badValue(_ message: String, command: String, help: String) -> Int32 {
        Output.stderr("beaconbridge \(command): \(message)\n\n\(help)")
        return ExitCode.usage
    }
}
