import BeaconConfigReading
import BeaconFormats

#if canImport(Glibc)
import Glibc
#endif

/// Loads the identity resolving keys of `devices.known` that live in files (`irk_file`) or the environment
/// (`irk_env`) through `SecretText`. Problems name the key path (the loader places them at their line and
/// column) and never contain the file's content or the variable's value; an absent credentials file leaves
/// the device without a key for this check.
enum DeviceKeyLoader {
    static func load(
        into settings: inout PrivateDeviceSettings, credentialsDirectory: String?,
        environment: (String) -> String?
    ) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        for index in settings.known.indices {
            let device = settings.known[index]
            let at = "devices.known[\(index)].\(device.keySource.key)"
            let outcome: SecretText.Outcome
            switch device.keySource {
            case .inline: continue
            case .environment(let name): outcome = SecretText.fromEnvironment(name, environment: environment)
            case .file(let path): outcome = SecretText.fromFile(path, credentialsDirectory: credentialsDirectory)
            }
            switch outcome {
            case .skipped: continue
            case .problem(let message): issues.append(ConfigIssue(path: at, message: message))
            case .text(let text, let origin):
                if let key = IdentityResolvingKey(text: text) {
                    settings.known[index].key = key
                } else {
                    issues.append(
                        ConfigIssue(
                            path: at,
                            message: "\(origin): "
                                + (IdentityResolvingKey.problem(with: text) ?? "not a key")))
                }
            }
        }
        return issues
    }

    static func processEnvironment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
