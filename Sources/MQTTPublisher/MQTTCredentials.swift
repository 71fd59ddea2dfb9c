import BeaconDelivery

#if canImport(Glibc)
import Glibc
#endif

/// Reads the broker password from `mqtt.password_file` or the `mqtt.password_env` variable. The password is
/// never taken from argv, never logged and never part of an error message.
public enum MQTTCredentials {
    /// The password, or nil when neither source is configured.
    public static func password(
        for settings: MQTTSettings,
        environment: (String) -> String? = MQTTCredentials.processEnvironment
    ) throws(MQTTError) -> String? {
        if let name = settings.passwordEnv {
            guard let value = environment(name) else {
                throw MQTTError(
                    operation: "read mqtt.password_env", code: 0,
                    message: "environment variable \(name) is not set")
            }
            return value
        }
        guard let path = settings.passwordFile else { return nil }
        var text = try readFile(path)
        while let last = text.last, last == "\n" || last == "\r" { text.removeLast() }
        return text
    }

    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    static func readFile(_ path: String) throws(MQTTError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw MQTTError(
                operation: "read mqtt.password_file", code: 0,
                message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw MQTTError(
                    operation: "read mqtt.password_file", code: 0,
                    message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
