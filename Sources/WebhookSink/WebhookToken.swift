import BeaconDelivery

#if canImport(Glibc)
import Glibc
#endif

/// Reads the webhook's bearer token from `webhook.token_file` or the `webhook.token_env` variable. The token is
/// never taken from argv, never logged and never part of an error message.
public enum WebhookToken {
    /// The token, or nil when neither source is configured.
    public static func read(
        for settings: WebhookSettings, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) throws(WebhookError) -> String? {
        if let name = settings.tokenEnv {
            guard let value = environment(name) else {
                throw WebhookError(
                    operation: "read webhook.token_env", message: "environment variable \(name) is not set")
            }
            return value
        }
        guard let path = settings.tokenFile else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw WebhookError(
                operation: "read webhook.token_file",
                message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw WebhookError(
                    operation: "read webhook.token_file",
                    message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        var text = String(decoding: bytes, as: UTF8.self)
        while let last = text.last, last == "\n" || last == "\r" { text.removeLast() }
        if text.contains(where: { $0 == "\n" || $0 == "\r" }) {
            throw WebhookError(operation: "read webhook.token_file", message: "\(path) holds more than one line")
        }
        return text
    }
}
