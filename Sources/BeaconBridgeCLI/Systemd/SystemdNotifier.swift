#if canImport(Glibc)
import Glibc
#endif

/// The systemd notify protocol (`sd_notify(3)`) without libsystemd: one datagram per message to the
/// AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket).
///
/// Each message opens, sends on and closes its own socket, so the value is trivially `Sendable` and nothing
/// is held between the few messages a daemon sends (READY once, WATCHDOG every few seconds).
public struct SystemdNotifier: Sendable, Equatable {
    /// As given in `$NOTIFY_SOCKET`.
    public let socketName: String

    /// Nil when `$NOTIFY_SOCKET` is unset or empty (not started by systemd with `Type=notify`).
    public init?(environment: [String: String]) {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        self.socketName = name
    }

    public init(socketName: String) { self.socketName = socketName }

    /// `READY=1`, with an optional `STATUS=` line: startup finished.
    public func ready(status: String? = nil) throws(SystemdNotifyError) {
        try send(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// `STATUS=...`: a one-line state shown by `systemctl status`.
    public func status(_ text: String) throws(SystemdNotifyError) { try send(["STATUS=" + Self.oneLine(text)]) }

    /// `STOPPING=1`: shutdown began.
    public func stopping() throws(SystemdNotifyError) { try send(["STOPPING=1"]) }

    /// `RELOADING=1`: a configuration reload began; send `ready()` when it is done.
    public func reloading() throws(SystemdNotifyError) { try send(["RELOADING=1"]) }

    /// `WATCHDOG=1`: the keep-alive ping.
    public func watchdog() throws(SystemdNotifyError) { try send(["WATCHDOG=1"]) }

    /// Sends assignments as one datagram, newline-separated. The corresponding C functions are `socket` and
    /// `sendto`.
    public func send(_ assignments: [String]) throws(SystemdNotifyError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketName.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        guard abstract || name.first == UInt8(ascii: "/") else {
            throw SystemdNotifyError(
                call: "NOTIFY_SOCKET", code: EAFNOSUPPORT,
                detail: "`\(socketName)` is neither a path nor an abstract name")
        }
        if abstract { name[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count < capacity else {
            throw SystemdNotifyError(call: "NOTIFY_SOCKET", code: ENAMETOOLONG, detail: "`\(socketName)`")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: name)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        let length = socklen_t(pathOffset + name.count + (abstract ? 0 : 1))

        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdNotifyError(call: "socket", code: errno) }
        defer { close(fd) }
        let message = Array(assignments.joined(separator: "\n").utf8)
        var sent: Int
        repeat {
            sent = message.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
                    }
                }
            }
        } while sent < 0 && errno == EINTR
        guard sent >= 0 else { throw SystemdNotifyError(call: "sendto", code: errno, detail: socketName) }
    }

    /// Newlines would start a new assignment: replace them.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

/// A failed notify call with its errno.
public struct SystemdNotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var detail: String

    public init(call: String, code: Int32, detail: String = "") {
        self.call = call
        self.code = code
        self.detail = detail
    }

    public var description: String {
        let reason = strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return "\(call) failed: \(reason)" + (detail.isEmpty ? "" : " (\(detail))")
    }
}
