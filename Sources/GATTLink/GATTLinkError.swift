import DeviceProtocols
import HCIScanner

#if canImport(Glibc)
import Glibc
#endif

/// A failure of a GATT connection: what went wrong, with which device, at which step, with the errno when a
/// system call failed. `description` is the message a user sees.
public struct GATTLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The adapter cannot be used (absent, down, no Bluetooth in the kernel, no permission).
        case adapter(HCIError.Kind)
        /// Every connection slot is taken (`limit` connections are open).
        case noSlot(limit: Int)
        /// A connection to this device is already open (one per device).
        case alreadyConnected
        /// The LE connection was not established within the connect timeout (or the kernel's own, ETIMEDOUT).
        case connectTimeout(seconds: Double)
        /// The device refused the connection (ECONNREFUSED).
        case refused
        /// The device did not answer (EHOSTDOWN, EHOSTUNREACH): out of range, not connectable.
        case hostDown
        /// The link went down (the peer closed it, ECONNRESET, or the supervision timeout).
        case disconnected
        /// The device has no characteristic (or descriptor) of this UUID.
        case notFound(GATTUUID)
        /// The GATT procedure failed: an ATT error, a transaction timeout, a malformed response.
        case gatt(GATTError)
        /// Any other system call failure.
        case system
    }

    public var kind: Kind
    /// The device, e.g. `AA:BB:CC:DD:EE:FF`.
    public var peer: String
    /// Where it happened: `connect`, `bind(hci0)`, `read 2a26`, `subscribe 2a19`...
    public var step: String
    /// errno of the failing system call, 0 when none.
    public var errno: Int32

    public init(_ kind: Kind, peer: String, step: String, errno: Int32 = 0) {
        self.kind = kind
        self.peer = peer
        self.step = step
        self.errno = errno
    }

    /// Maps a failed system call of the connection to a kind by errno.
    static func system(_ code: Int32, peer: String, step: String) -> GATTLinkError {
        let kind: Kind
        switch code {
        case ETIMEDOUT: kind = .connectTimeout(seconds: 0)
        case ECONNREFUSED: kind = .refused
        case EHOSTDOWN, EHOSTUNREACH: kind = .hostDown
        case ECONNRESET, ECONNABORTED, ENOTCONN, EPIPE, ESHUTDOWN: kind = .disconnected
        case EAFNOSUPPORT, EPROTONOSUPPORT, EPERM, EACCES, ENODEV, EADDRNOTAVAIL, ENETDOWN, ERFKILL, EBUSY:
            kind = .adapter(HCIError.system(code == EADDRNOTAVAIL ? ENODEV : code, adapter: "", call: "").kind)
        default: kind = .system
        }
        return GATTLinkError(kind, peer: peer, step: step, errno: code)
    }

    /// The errno and its text, e.g. "errno 110, Connection timed out".
    public var errnoText: String {
        guard errno != 0 else { return "" }
        let text = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
        return "errno \(errno), \(text)"
    }

    public var description: String {
        let prefix = "\(peer): \(step): "
        let cause = errno != 0 ? " (\(errnoText))" : ""
        switch kind {
        case .adapter(let adapterKind):
            return prefix + HCIError(kind: adapterKind, adapter: "adapter", call: step, errno: errno).description
        case .noSlot(let limit):
            return prefix + "all \(limit) connection slots are in use; try again when one is free"
        case .alreadyConnected:
            return prefix + "a connection to this device is already open"
        case .connectTimeout(let seconds):
            let after = seconds > 0 ? " after \(seconds) s" : ""
            return prefix + "connect timed out\(after): the device did not answer (out of range, not advertising "
                + "connectable, or the wrong address type: --random for a random address)" + cause
        case .refused:
            return prefix + "the device refused the connection" + cause
        case .hostDown:
            return prefix + "the device is not reachable (out of range or not connectable)" + cause
        case .disconnected:
            return prefix + "the link went down" + cause
        case .notFound(let uuid):
            return prefix + "the device has no characteristic \(uuid)"
        case .gatt(let error):
            return prefix + "\(error)"
        case .system:
            return prefix + "failed" + cause
        }
    }
}
