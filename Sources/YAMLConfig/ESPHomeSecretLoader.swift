import BeaconConfigReading
import DeviceProtocols

/// Checks the secrets `esphome_api` names (when the proxy is enabled): the encryption key file or variable must
/// exist, be readable and hold ESPHome's 32-byte key in base64; the password file or variable must exist and be
/// readable. Problems name the key path (placed at its line and column by the loader) and never contain the
/// file's content or the variable's value. An absent systemd credentials file is skipped (it exists only while
/// the service runs). The daemon reads the secrets again when it starts the proxy.
enum ESPHomeSecretLoader {
    static let keyShape =
        "a 32-byte key in base64 (as ESPHome's `api: encryption: key:`; make one with "
        + "`head -c 32 /dev/urandom | base64`)"

    static func issues(
        in settings: ESPHomeAPISettings, credentialsDirectory: String?,
        environment: (String) -> String?
    ) -> [ConfigIssue] {
        guard settings.enabled else { return [] }
        var issues: [ConfigIssue] = []
        if case let (key, outcome)? = read(
            file: settings.encryptionKeyFile, env: settings.encryptionKeyEnv, name: "encryption_key",
            credentialsDirectory: credentialsDirectory, environment: environment)
        {
            switch outcome {
            case .skipped: break
            case .problem(let message): issues.append(ConfigIssue(path: key, message: message))
            case .text(let text, let origin):
                if ESPHomeEncryptionKey.decode(text) == nil {
                    issues.append(ConfigIssue(path: key, message: "\(origin) does not hold \(keyShape)"))
                }
            }
        }
        if case let (key, outcome)? = read(
            file: settings.passwordFile, env: settings.passwordEnv, name: "password",
            credentialsDirectory: credentialsDirectory, environment: environment),
            case .problem(let message) = outcome
        {
            issues.append(ConfigIssue(path: key, message: message))
        }
        return issues
    }

    /// The key path and what reading it gave; nil when neither `NAME_file` nor `NAME_env` is set. With both set
    /// the section's own check reports it; the variable is what the daemon uses then.
    private static func read(
        file: String?, env: String?, name: String, credentialsDirectory: String?,
        environment: (String) -> String?
    ) -> (String, SecretText.Outcome)? {
        if let env { return ("esphome_api.\(name)_env", SecretText.fromEnvironment(env, environment: environment)) }
        guard let file else { return nil }
        return ("esphome_api.\(name)_file", SecretText.fromFile(file, credentialsDirectory: credentialsDirectory))
    }
}
