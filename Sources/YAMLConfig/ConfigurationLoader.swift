import BeaconConfig
import BeaconConfigReading

#if canImport(Glibc)
import Glibc
#endif

/// Loads `beaconbridge.yaml`: reads the file, parses it with libyaml and decodes every section, reporting all
/// problems at once.
public enum ConfigurationLoader {
    public static let defaultPath = "/etc/beaconbridge/beaconbridge.yaml"

    /// Loads and validates the configuration at `path`. `environment` defaults to this machine's.
    public static func load(
        path: String, environment: ConfigEnvironment? = nil,
        limits: YAMLLimits = .standard
    ) -> Result<GatewayConfiguration, ConfigErrors> {
        readDocument(path: path, limits: limits).flatMap { document in
            decode(document, file: path, environment: environment ?? currentEnvironment())
        }
    }

    /// Validates configuration text as if it were the file `file`. `checksFiles`: also check that the files
    /// it names (password, certificates, capture) exist and are readable.
    public static func load(
        yaml: String, file: String, environment: ConfigEnvironment, checksFiles: Bool = true,
        limits: YAMLLimits = .standard
    ) -> Result<GatewayConfiguration, ConfigErrors> {
        decode(
            YAMLParser.parse(yaml, file: file, limits: limits), file: file, environment: environment,
            checksFiles: checksFiles)
    }

    /// Validates a tree built from more than one file (a site configuration merged with the gateway's own file:
    /// docs/site-config.md) as if it were the file `file`: the same checks as `load(path:)`.
    public static func load(
        root: ConfigNode, file: String, environment: ConfigEnvironment, checksFiles: Bool = true
    ) -> Result<GatewayConfiguration, ConfigErrors> {
        decode(YAMLDocument(root: root, issues: []), file: file, environment: environment, checksFiles: checksFiles)
    }

    /// Reads and parses a file into a tree without decoding sections (for commands that read one section);
    /// structural problems (syntax, duplicate keys, tags) are errors.
    public static func loadDocument(path: String, limits: YAMLLimits = .standard) -> Result<ConfigNode, ConfigErrors> {
        readDocument(path: path, limits: limits).flatMap { document in
            guard let root = document.root, document.issues.isEmpty else {
                return .failure(ConfigErrors(kind: .invalid, issues: document.issues))
            }
            return .success(root)
        }
    }

    static func readDocument(path: String, limits: YAMLLimits) -> Result<YAMLDocument, ConfigErrors> {
        switch ConfigFile.read(path: path, maxBytes: limits.maxBytes) {
        case .failure(.missing):
            return .failure(ConfigErrors(kind: .fileMissing, issues: [fileIssue(path, "no such file")]))
        case .failure(.unreadable(let why)):
            return .failure(ConfigErrors(kind: .fileUnreadable, issues: [fileIssue(path, "cannot read: \(why)")]))
        case .failure(.tooLarge(let size)):
            return .failure(
                ConfigErrors(
                    kind: .invalid,
                    issues: [
                        fileIssue(path, "the file is \(size) bytes; at most \(limits.maxBytes) bytes are accepted")
                    ]))
        case .success(let bytes):
            return .success(YAMLParser.parse(bytes, file: path, limits: limits))
        }
    }

    /// Decodes the sections of a parsed document. Structural issues that still left a tree (a duplicate key,
    /// a tag) are reported together with the sections' issues, in file order.
    static func decode(
        _ document: YAMLDocument, file: String, environment: ConfigEnvironment,
        checksFiles: Bool = true
    ) -> Result<GatewayConfiguration, ConfigErrors> {
        guard let root = document.root else {
            return .failure(ConfigErrors(kind: .invalid, issues: document.issues))
        }
        var (configuration, issues) = GatewayConfiguration.read(root, file: file, environment: environment)
        let credentialsDirectory = getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        // Placed at the keys naming the files; skipped where a key already has a problem.
        var placer = ConfigReader(root, file: file)
        placer.absorbIssues(issues)
        // Device keys are needed to run, not only checked: loaded whether or not files are checked.
        placer.report(
            DeviceKeyLoader.load(
                into: &configuration.devices, credentialsDirectory: credentialsDirectory,
                environment: DeviceKeyLoader.processEnvironment))
        placer.report(
            BindKeyLoader.load(
                into: &configuration.formats, credentialsDirectory: credentialsDirectory,
                environment: DeviceKeyLoader.processEnvironment))
        if checksFiles {
            placer.report(
                ESPHomeSecretLoader.issues(
                    in: configuration.esphomeAPI, credentialsDirectory: credentialsDirectory,
                    environment: DeviceKeyLoader.processEnvironment))
            placer.report(
                HTTPTokenLoader.issues(
                    in: configuration.http, credentialsDirectory: credentialsDirectory,
                    environment: DeviceKeyLoader.processEnvironment))
            placer.report(ReferencedFiles.issues(in: configuration, credentialsDirectory: credentialsDirectory))
        }
        issues = placer.issues
        let all = ConfigReader.sortedByPlace(document.issues + issues)
        return all.isEmpty ? .success(configuration) : .failure(ConfigErrors(kind: .invalid, issues: all))
    }

    /// This machine's host name (`gethostname`), for the default gateway id.
    public static func currentEnvironment() -> ConfigEnvironment {
        var buffer = [CChar](repeating: 0, count: 256)
        let ok = gethostname(&buffer, buffer.count - 1) == 0
        let name = ok ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return ConfigEnvironment(hostname: name)
    }

    private static func fileIssue(_ path: String, _ message: String) -> ConfigIssue {
        ConfigIssue(path: "", message: message, file: path, line: nil, column: nil)
    }
}
