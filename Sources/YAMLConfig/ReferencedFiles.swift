import BeaconConfig
import BeaconConfigReading

#if canImport(Glibc)
import Glibc
#endif

/// Checks the files a configuration names (password file, TLS certificates, replay capture) so that
/// `check-config` reports a wrong path at its line instead of the daemon failing later.
///
/// Paths under systemd's credentials directory (`/run/credentials/...`, `$CREDENTIALS_DIRECTORY`) exist only
/// while the service runs and are not checked.
enum ReferencedFiles {
    enum Kind { case file, directory }

    static func issues(in c: GatewayConfiguration, credentialsDirectory: String?) -> [ConfigIssue] {
        var references: [(path: String, file: String?, kind: Kind)] = [
            ("mqtt.password_file", c.mqtt.passwordFile, .file),
            ("mqtt.tls.ca_file", c.mqtt.tls?.caFile, .file),
            ("mqtt.tls.ca_dir", c.mqtt.tls?.caDir, .directory),
            ("mqtt.tls.cert_file", c.mqtt.tls?.certFile, .file),
            ("mqtt.tls.key_file", c.mqtt.tls?.keyFile, .file),
            ("webhook.token_file", c.webhook?.tokenFile, .file),
            ("webhook.ca_file", c.webhook?.caFile, .file),
        ]
        if case .replay(let capture) = c.scanner.source { references.append(("scanner.source", capture, .file)) }
        var issues: [ConfigIssue] = []
        for reference in references {
            guard let file = reference.file, !file.isEmpty else { continue }
            if file.hasPrefix("/run/credentials/") { continue }
            if let credentialsDirectory, !credentialsDirectory.isEmpty, file.hasPrefix(credentialsDirectory) {
                continue
            }
            if let problem = problem(with: file, kind: reference.kind) {
                issues.append(ConfigIssue(path: reference.path, message: problem))
            }
        }
        return issues
    }

    /// Why `path` is not usable, or nil. The corresponding C functions are `stat` and `access`.
    static func problem(with path: String, kind: Kind) -> String? {
        guard path.hasPrefix("/") else {
            return "`\(path)` must be an absolute path (the service runs from /)"
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT || errno == ENOTDIR
                ? "`\(path)` does not exist"
                : "`\(path)` cannot be checked: \(ConfigFile.describe(errno))"
        }
        let isDirectory = info.st_mode & S_IFMT == S_IFDIR
        switch kind {
        case .file where isDirectory: return "`\(path)` is a directory, not a file"
        case .directory where !isDirectory: return "`\(path)` is not a directory"
        default: break
        }
        if access(path, R_OK) != 0 { return "`\(path)` is not readable: \(ConfigFile.describe(errno))" }
        return nil
    }
}
