import BeaconConfigReading
import BeaconFormats

/// Loads the BTHome bind keys of `formats.bthome_keys` from their files (`key_file`) or the environment
/// (`key_env`) through `SecretText`. Problems name the key path (placed at its line and column by the loader)
/// and never contain the file's content or the variable's value; an absent credentials file leaves the device
/// without a key for this check.
enum BindKeyLoader {
    static let shape = "32 hex digits (16 bytes)"

    static func load(
        into settings: inout FormatSettings, credentialsDirectory: String?,
        environment: (String) -> String?
    ) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        for index in settings.bthomeKeys.indices {
            guard let source = settings.bthomeKeys[index].source else { continue }
            let at = "formats.bthome_keys[\(index)].\(source.key)"
            let outcome: SecretText.Outcome
            switch source {
            case .environment(let name): outcome = SecretText.fromEnvironment(name, environment: environment)
            case .file(let path): outcome = SecretText.fromFile(path, credentialsDirectory: credentialsDirectory)
            }
            switch outcome {
            case .skipped: continue
            case .problem(let message): issues.append(ConfigIssue(path: at, message: message))
            case .text(let text, let origin):
                if let key = BTHomeKey.parse(text) {
                    settings.bthomeKeys[index].key = SecretBytes(key)
                } else {
                    issues.append(ConfigIssue(path: at, message: "\(origin) does not hold \(shape)"))
                }
            }
        }
        return issues
    }
}
