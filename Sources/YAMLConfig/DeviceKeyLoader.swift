import BeaconCore
#if canImport(Glibc)
import Glibc
#endif

/// Loads the identity resolving keys of `devices.known` that live in files (`irk_file`) or the environment
/// (`irk_env`). Problems name the key path (the loader places them at their line and column) and never contain
/// the file's content or the variable's value.
///
/// Files under systemd's credentials directory (`/run/credentials/...`, `$CREDENTIALS_DIRECTORY`) exist only
/// while the service runs: when absent they are skipped (the device is left without a key for this check).
enum DeviceKeyLoader {
    static let maxKeyFileBytes = 4096

    static func load(into settings: inout PrivateDeviceSettings, credentialsDirectory: String?,
                     environment: (String) -> String?) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        for index in settings.known.indices {
            let device = settings.known[index]
            let at = "devices.known[\(index)].\(device.keySource.key)"
            switch device.keySource {
            case .inline:
                continue
            case .environment(let name):
                guard !name.isEmpty else { continue }
                guard let value = environment(name) else {
                    issues.append(ConfigIssue(path: at, message: "environment variable \(name) is not set"))
                    continue
                }
                if let key = IdentityResolvingKey(text: value) {
                    settings.known[index].key = key
                } else {
                    issues.append(ConfigIssue(path: at, message: "environment variable \(name): "
                                              + (IdentityResolvingKey.problem(with: value) ?? "not a key")))
                }
            case .file(let path):
                guard path.hasPrefix("/") else { continue }  // reported by the reader
                let underCredentials = path.hasPrefix("/run/credentials/")
                    || (credentialsDirectory.map { !$0.isEmpty && path.hasPrefix($0) } ?? false)
                switch ConfigFile.read(path: path, maxBytes: maxKeyFileBytes) {
                case .failure(.missing):
                    if !underCredentials { issues.append(ConfigIssue(path: at, message: "`\(path)` does not exist")) }
                case .failure(.unreadable(let why)):
                    issues.append(ConfigIssue(path: at, message: "`\(path)` cannot be read: \(why)"))
                case .failure(.tooLarge):
                    issues.append(ConfigIssue(path: at, message: "`\(path)` is larger than a key file "
                                              + "(at most \(maxKeyFileBytes) bytes)"))
                case .success(let bytes):
                    let text = String(decoding: bytes, as: UTF8.self)
                    if let key = IdentityResolvingKey(text: text) {
                        settings.known[index].key = key
                    } else {
                        issues.append(ConfigIssue(path: at, message: "`\(path)`: "
                                                  + (IdentityResolvingKey.problem(with: text) ?? "not a key")))
                    }
                }
            }
        }
        return issues
    }

    static func processEnvironment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
