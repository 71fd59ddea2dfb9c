import BeaconConfig
import BeaconConfigReading
import BeaconEvents
import BeaconFormats
import DeviceProtocols
import HCIScanner
import MQTTPublisher
import SQLiteStore
import YAMLConfig

#if canImport(Glibc)
import Glibc
import BeaconModel
#endif

/// What the daemon needs at start beyond the configuration's own rules, checked by one function with two
/// callers: `check-config` (exit 78 on a problem) and `run`/`replay` before anything starts (also exit 78),
/// so a file `check-config` accepts is one the daemon can start with.
///
/// Problems: the outbox path cannot hold a database (a directory, a missing directory whose parent is missing
/// too, a place where files cannot be created; a missing directory whose parent exists is created at start),
/// the layouts do not build a decoder, the MQTT client refuses the settings (libmosquitto's own checks of the
/// client id, user name, will topic and TLS files, without connecting). Warnings (printed, not fatal): a
/// missing outbox directory this user could not create, a secret file other users can read, `mqtt.tls.verify: false`, an outbox file that is not a database
/// (moved aside at start).
enum StartupChecks {
    struct Findings {
        var problems: [ConfigIssue] = []
        var warnings: [ConfigIssue] = []
    }

    static func run(_ c: GatewayConfiguration) -> Findings {
        var findings = Findings()
        if let problem = DatabaseFile.problem(with: c.outbox.path) {
            findings.problems.append(ConfigIssue(path: "outbox.path", message: problem))
        } else if let missing = DatabaseFile.missingDirectory(for: c.outbox.path) {
            // Created by the daemon at start; said only when this user could not.
            if !missing.creatable {
                findings.warnings.append(
                    ConfigIssue(
                        path: "outbox.path",
                        message: "directory `\(missing.directory)` does not exist; the gateway creates it at start, "
                            + "which this user may not (the package's service has systemd create it: "
                            + "StateDirectory=)"))
            }
        } else if DatabaseFile.lacksDatabaseHeader(c.outbox.path) {
            findings.warnings.append(
                ConfigIssue(
                    path: "outbox.path",
                    message: "`\(c.outbox.path)` is not an SQLite "
                        + "database: the gateway will move it aside (kept, renamed .damaged-TIME) and start a new one"))
        }
        if let record = c.scanner.record, let problem = CaptureFile.outputProblem(record) {
            findings.problems.append(ConfigIssue(path: "scanner.record", message: problem))
        }
        do { _ = try BeaconDecoder(settings: c.formats) } catch {
            findings.problems.append(ConfigIssue(path: "formats.layouts", message: "\(error)"))
        }
        let layout = TopicLayout(settings: c.topics, gatewayID: c.gateway.id)
        let options = MQTTClientOptions(
            settings: c.mqtt, clientID: c.mqtt.clientID ?? "beaconbridge-\(c.gateway.id)",
            password: nil,
            will: ControlMessage(topic: layout.availability, payload: "offline", qos: 1, retain: true))
        do { _ = try MQTTClient(options: options, onEvent: { _ in }) } catch {
            findings.problems.append(
                ConfigIssue(path: key(for: error), message: "the MQTT client refuses it: \(error)"))
        }
        findings.warnings += secretFileWarnings(c)
        if let tls = c.mqtt.tls, !tls.verify {
            findings.warnings.append(
                ConfigIssue(
                    path: "mqtt.tls.verify",
                    message: "false: the broker's certificate is "
                        + "not checked, so anyone on the path can pose as the broker and read the password and every event"
                ))
        } else if let tls = c.mqtt.tls, !tls.verifyHostname {
            findings.warnings.append(
                ConfigIssue(
                    path: "mqtt.tls.verify_hostname",
                    message: "false: any certificate "
                        + "the CA signed is accepted for this broker"))
        }
        findings.problems += firmwarePackageProblems(c.gatt)
        return findings
    }

    /// Each `gatt.devices[].firmware` package read and validated (the daemon reads it again before each update).
    static func firmwarePackageProblems(_ gatt: GATTSettings) -> [ConfigIssue] {
        guard gatt.enabled else { return [] }
        var problems: [ConfigIssue] = []
        for (index, device) in gatt.devices.enumerated() {
            guard let firmware = device.firmware, !firmware.isEmpty else { continue }
            do throws(DFUPackageFile.Failure) { _ = try DFUPackageFile.load(firmware) } catch {
                problems.append(ConfigIssue(path: "gatt.devices[\(index)].firmware", message: "\(error)"))
            }
        }
        return problems
    }

    /// The key a libmosquitto set-up failure is about.
    static func key(for error: MQTTError) -> String {
        switch error.operation {
        case let operation where operation.hasPrefix("create client"): "mqtt.client_id"
        case let operation where operation.hasPrefix("set will"): "topics.prefix"
        case let operation where operation.hasPrefix("set username"): "mqtt.username"
        case let operation where operation.includes("TLS"): "mqtt.tls"
        default: "mqtt"
        }
    }

    /// Secret files (password, TLS key, device and bind keys) that other users can read.
    static func secretFileWarnings(_ c: GatewayConfiguration) -> [ConfigIssue] {
        var files: [(key: String, path: String?)] = [
            ("mqtt.password_file", c.mqtt.passwordFile),
            ("mqtt.tls.key_file", c.mqtt.tls?.keyFile),
            ("esphome_api.encryption_key_file", c.esphomeAPI.encryptionKeyFile),
            ("esphome_api.password_file", c.esphomeAPI.passwordFile),
            ("webhook.token_file", c.webhook?.tokenFile),
            ("http.token_file", c.http.tokenFile),
            ("http.action_token_file", c.http.actionTokenFile),
        ]
        for (index, device) in c.devices.known.enumerated() {
            if case let .file(path) = device.keySource { files.append(("devices.known[\(index)].irk_file", path)) }
        }
        for (index, entry) in c.formats.bthomeKeys.enumerated() {
            if case let .file(path)? = entry.source { files.append(("formats.bthome_keys[\(index)].key_file", path)) }
        }
        var warnings: [ConfigIssue] = []
        for (key, path) in files {
            guard let path, !path.isEmpty else { continue }
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 != 0 else { continue }
            let who = mode & 0o007 != 0 ? "every user" : "the file's group"
            warnings.append(
                ConfigIssue(
                    path: key,
                    message: "`\(path)` holds a secret and \(who) can read it "
                        + "(mode \(octal(mode))): chmod 600 \(path)"))
        }
        return warnings
    }

    static func octal(_ mode: mode_t) -> String {
        let text = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    /// `FILE:LINE:COL: KEYPATH: warning: MESSAGE`.
    static func warningLine(_ warning: ConfigIssue) -> String {
        var marked = warning
        marked.message = "warning: " + warning.message
        return marked.located
    }

    /// Places findings (key paths only) at their lines in `file`, as the configuration reader does.
    static func locate(_ issues: [ConfigIssue], in file: String) -> [ConfigIssue] {
        guard !issues.isEmpty, case let .success(root) = ConfigurationLoader.loadDocument(path: file) else {
            return issues.map { ConfigIssue(path: $0.path, message: $0.message, file: file, line: nil, column: nil) }
        }
        var placer = ConfigReader(root, file: file)
        placer.report(issues)
        return placer.issues
    }
}
