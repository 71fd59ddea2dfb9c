import BeaconModel

#if canImport(Glibc)
import Glibc
import BeaconFormats
#endif

/// A failure of the HCI scanner: what went wrong, on which adapter, in which call, with the errno or the HCI
/// status. `description` is the message a user sees, with what to do about it.
public struct HCIError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The kernel has no Bluetooth support (EAFNOSUPPORT creating an AF_BLUETOOTH socket).
        case bluetoothUnsupported
        /// Missing CAP_NET_RAW (commands) or CAP_NET_ADMIN (bringing the adapter up): EPERM / EACCES.
        case permissionDenied
        /// No such adapter (ENODEV), or no adapter with that address.
        case adapterAbsent
        /// The adapter is powered off and could not be brought up (the errno says why, e.g. ERFKILL).
        case adapterDown
        /// The adapter is in use by another program in exclusive mode (EBUSY).
        case adapterBusy
        /// The controller rejected a command with this HCI status.
        case commandFailed(status: UInt8)
        /// The controller did not answer a command in time.
        case commandTimeout
        /// The controller does not support what the configuration demands (`extended: on`).
        case unsupported
        /// Any other system call failure.
        case system
    }

    public var kind: Kind
    /// The adapter as configured (`hci0`, an address) or resolved.
    public var adapter: String
    /// The failing call, e.g. `socket(AF_BLUETOOTH)`, `bind(hci0)`, `LE Set Scan Enable (0x200C)`.
    public var call: String
    /// errno of the failing system call, 0 for HCI status failures.
    public var errno: Int32

    public init(kind: Kind, adapter: String, call: String, errno: Int32 = 0) {
        self.kind = kind
        self.adapter = adapter
        self.call = call
        self.errno = errno
    }

    /// Maps a system call failure to a kind by errno.
    public static func system(_ code: Int32, adapter: String, call: String) -> HCIError {
        let kind: Kind
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: kind = .bluetoothUnsupported
        case EPERM, EACCES: kind = .permissionDenied
        case ENODEV, ENXIO: kind = .adapterAbsent
        case ENETDOWN, ERFKILL: kind = .adapterDown
        case EBUSY, EALREADY: kind = .adapterBusy
        default: kind = .system
        }
        return HCIError(kind: kind, adapter: adapter, call: call, errno: code)
    }

    /// The errno and its text, e.g. "errno 1, Operation not permitted".
    public var errnoText: String {
        guard errno != 0 else { return "" }
        let text = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
        return "errno \(errno), \(text)"
    }

    public var description: String {
        let cause = errno != 0 ? " (\(call): \(errnoText))" : " (\(call))"
        switch kind {
        case .bluetoothUnsupported:
            return "the kernel has no Bluetooth support: load the bluetooth module (modprobe bluetooth)" + cause
        case .permissionDenied:
            return "permission denied on \(adapter): beaconbridge needs CAP_NET_RAW and CAP_NET_ADMIN "
                + "(run as root, or AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN in the systemd unit)" + cause
        case .adapterAbsent:
            return "Bluetooth adapter \(adapter) not found (list adapters with `hciconfig` or `btmgmt info`)" + cause
        case .adapterDown:
            let hint =
                errno == ERFKILL
                ? "it is blocked by rfkill (`rfkill unblock bluetooth`)"
                : "bring it up with `hciconfig \(adapter) up` or grant CAP_NET_ADMIN so beaconbridge can"
            return "Bluetooth adapter \(adapter) is down: \(hint)" + cause
        case .adapterBusy:
            return "Bluetooth adapter \(adapter) is busy (in exclusive use by another program)" + cause
        case let .commandFailed(status):
            return
                "Bluetooth adapter \(adapter) rejected \(call) with status 0x\(HexText.hex(byte: status, uppercase: true)) "
                + "(\(HCIStatus.name(status)))"
        case .commandTimeout:
            return "Bluetooth adapter \(adapter) did not answer \(call) within the timeout (adapter hung?)"
        case .unsupported:
            return "Bluetooth adapter \(adapter) does not support \(call)"
        case .system:
            return "Bluetooth adapter \(adapter): \(call) failed" + (errno != 0 ? ": \(errnoText)" : "")
        }
    }

    /// True when the controller answered with a non-zero status.
    public var isCommandFailure: Bool {
        if case .commandFailed = kind { return true }
        return false
    }

    /// True when the adapter itself is gone (reopen rather than power-cycle).
    public var adapterGone: Bool { kind == .adapterAbsent }
}
