import BeaconCore
#if canImport(Glibc)
import Glibc
#endif

/// Loads the BTHome bind keys of `formats.bthome_keys` from their files (`key_file`) or the environment
/// (`key_env`). Problems name the key path (placed at its line and column by the loader) and never contain the
/// file's content or the variable's value. Files under systemd's credentials directory exist only while the
/// service runs: when absent they are skipped (the device is left without a key for this check).
enum BindKeyLoader {
    static let maxKeyFileBytes = 4096
    static let shape = "32 hex digits (16 bytes)"

    static func load(into settings: inout FormatSettings, credentialsDirectory: String?,
                     environment: (String) -> String?) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        for index in settings.bthomeKeys.indices {
            guard let source = settings.bthomeKeys[index].source else { continue }
            let at = "formats.bthome_keys[\(index)].\(source.key)"
            switch source {
            case .environment(let name):
                guard !name.isEmpty else { continue }
                guard let value = environment(name) else {
                    issues.append(ConfigIssue(path: at, message: "environment variable \(name) is not set"))
                    continue
                }
                if let key = BTHomeKey.parse(value) {
                    settings.bthomeKeys[index].key = SecretBytes(key)
                } else {
                    issues.append(ConfigIssue(path: at, message: "environment variable \(name) does not hold \(shape)"))
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
                    issues.append(ConfigIssue(path: at, message: "`\(path)` is larger than a key file (at most \(maxKeyFileBytes) bytes)"))
                case .success(let bytes):
                    if let key = BTHomeKey.parse(String(decoding: bytes, as: UTF8.self)) {
                        settings.bthomeKeys[index].key = SecretBytes(key)
                    } else {
                        issues.append(ConfigIssue(path: at, message: "`\(path)` does not hold \(shape)"))
                    }
                }
            }
        }
        return issues
    }
}
