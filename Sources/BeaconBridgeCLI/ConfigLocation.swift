import BeaconConfig
import BeaconConfigReading
import YAMLConfig

#if canImport(Glibc)
import Glibc
#endif

/// Where the configuration file is: `--config FILE` (or `--config=FILE`, `-c FILE`), else the environment
/// variable `BEACONBRIDGE_CONFIG`, else `/etc/beaconbridge/beaconbridge.yaml`. Shared by every command that
/// reads the configuration.
struct ConfigLocation: Equatable {
    static let environmentVariable = "BEACONBRIDGE_CONFIG"

    enum Source: Equatable { case option, environment, builtIn }

    var path: String
    var source: Source

    /// Removes the config option from `arguments` and returns the location, or a usage error message.
    static func extract(
        from arguments: inout [String],
        environment: [String: String]
    ) -> Result<ConfigLocation, UsageError> {
        var found: String?
        var rest: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--config" || argument == "-c" {
                guard i + 1 < arguments.count, !arguments[i + 1].isEmpty else {
                    return .failure(UsageError("\(argument) needs a file name"))
                }
                found = arguments[i + 1]
                i += 2
                continue
            }
            if argument.hasPrefix("--config=") {
                let value = String(argument.dropFirst("--config=".count))
                guard !value.isEmpty else { return .failure(UsageError("--config needs a file name")) }
                found = value
            } else {
                rest.append(argument)
            }
            i += 1
        }
        arguments = rest
        if let found { return .success(ConfigLocation(path: found, source: .option)) }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty {
            return .success(ConfigLocation(path: fromEnvironment, source: .environment))
        }
        return .success(ConfigLocation(path: ConfigurationLoader.defaultPath, source: .builtIn))
    }

    /// How the user can point elsewhere, for "file missing" messages.
    var howToChange: String {
        switch source {
        case .option: "check the --config argument"
        case .environment: "check \(ConfigLocation.environmentVariable)"
        case .builtIn: "pass --config FILE or set \(ConfigLocation.environmentVariable)"
        }
    }
}

extension ConfigLocation {
    enum LoadOutcome {
        case loaded(GatewayConfiguration)
        /// The problems were printed on stderr; exit with this code (66 file missing/unreadable, 78 invalid).
        case failed(exitCode: Int32)
    }

    /// Loads and validates the file for `command` (e.g. "run"), printing every problem on stderr the same way
    /// `check-config` does. Commands that need the configuration call this and exit with the code on failure.
    /// `startupChecks`: also run the daemon's start-up checks (`StartupChecks`), printing their warnings.
    func load(command: String, hostEnvironment: ConfigEnvironment? = nil, startupChecks: Bool = false) -> LoadOutcome {
        switch ConfigurationLoader.load(path: path, environment: hostEnvironment) {
        case .success(let configuration):
            guard startupChecks else { return .loaded(configuration) }
            let findings = StartupChecks.run(configuration)
            for warning in StartupChecks.locate(findings.warnings, in: path) {
                Output.stderr(StartupChecks.warningLine(warning))
            }
            guard findings.problems.isEmpty else {
                let count = findings.problems.count
                Output.stderr(StartupChecks.locate(findings.problems, in: path).map(\.located).joined(separator: "\n"))
                Output.stderr("\(path): \(count) problem\(count == 1 ? "" : "s") found")
                return .failed(exitCode: ExitCode.config)
            }
            return .loaded(configuration)
        case .failure(let errors) where errors.kind == .fileMissing:
            Output.stderr("beaconbridge \(command): configuration file \(path) does not exist (\(howToChange))")
            return .failed(exitCode: ExitCode.noInput)
        case .failure(let errors) where errors.kind == .fileUnreadable:
            Output.stderr(errors.lines.map { "beaconbridge \(command): \($0)" }.joined(separator: "\n"))
            return .failed(exitCode: ExitCode.noInput)
        case .failure(let errors):
            let count = errors.issues.count
            Output.stderr(errors.lines.joined(separator: "\n"))
            Output.stderr("\(path): \(count) problem\(count == 1 ? "" : "s") found")
            return .failed(exitCode: ExitCode.config)
        }
    }
}

struct UsageError: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}
