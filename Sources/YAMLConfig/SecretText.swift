/// Reads a secret the configuration names by an environment variable or a file (BTHome bind keys, identity
/// resolving keys). Problems never contain the file's content or the variable's value.
///
/// Files under systemd's credentials directory (`/run/credentials/...`, `$CREDENTIALS_DIRECTORY`) exist only
/// while the service runs: when absent they are skipped.
enum SecretText {
    static let maxFileBytes = 4096

    enum Outcome {
        /// The text, and how to name where it came from in a problem (`environment variable NAME`, `` `PATH` ``).
        case text(String, origin: String)
        /// Nothing to check here (an empty variable name, a relative path the reader reports, an absent
        /// credentials file).
        case skipped
        case problem(String)
    }

    static func fromEnvironment(_ name: String, environment: (String) -> String?) -> Outcome {
        guard !name.isEmpty else { return .skipped }
        guard let value = environment(name) else { return .problem("environment variable \(name) is not set") }
        return .text(value, origin: "environment variable \(name)")
    }

    static func fromFile(_ path: String, credentialsDirectory: String?) -> Outcome {
        guard path.hasPrefix("/") else { return .skipped }  // reported by the reader
        let underCredentials =
            path.hasPrefix("/run/credentials/")
            || (credentialsDirectory.map { !$0.isEmpty && path.hasPrefix($0) } ?? false)
        switch ConfigFile.read(path: path, maxBytes: maxFileBytes) {
        case .failure(.missing):
            return underCredentials ? .skipped : .problem("`\(path)` does not exist")
        case .failure(.unreadable(let why)):
            return .problem("`\(path)` cannot be read: \(why)")
        case .failure(.tooLarge):
            return .problem("`\(path)` is larger than a key file (at most \(maxFileBytes) bytes)")
        case .success(let bytes):
            return .text(String(decoding: bytes, as: UTF8.self), origin: "`\(path)`")
        }
    }
}
