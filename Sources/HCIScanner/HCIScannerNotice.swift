import BeaconFormats
import BeaconModel

/// What the scanner reports to the daemon for logging and counting: the adapter it opened, supervision
/// steps and their outcome.
public enum HCIScannerNotice: Sendable, Equatable, CustomStringConvertible {
    /// Scanning started on this adapter.
    case opened(adapter: String, address: BluetoothAddress, extended: Bool, active: Bool)
    /// The adapter was down and the scanner brought it up (HCIDEVUP).
    case broughtUp(adapter: String)
    /// A supervision step begins.
    case recovering(ScanSupervisor.Action)
    /// The step worked: scanning again.
    case recovered(ScanSupervisor.Action)
    /// The step failed; supervision escalates or retries after a backoff.
    case recoveryFailed(ScanSupervisor.Action, HCIError)
    /// Scanning stopped and the adapter's socket was closed.
    case stopped(adapter: String)
    /// The identity beacon (self-calibration) is on the air; the transmit power the controller selected or
    /// reports, when it answered one, beside the one asked.
    case advertising(adapter: String, extended: Bool, txPower: Int8?, requested: Int8)
    /// The identity beacon could not be started (the scan goes on without it).
    case advertisingFailed(adapter: String, HCIError)

    public var description: String {
        switch self {
        case let .opened(adapter, address, extended, active):
            return "scanning on \(adapter) (\(address)) with \(extended ? "extended" : "legacy") LE scan commands, "
                + (active ? "active" : "passive")
        case let .broughtUp(adapter): return "adapter \(adapter) was down: brought it up"
        case let .recovering(action): return "supervision: \(Self.describe(action))"
        case let .recovered(action): return "supervision: \(Self.stepName(action)) done, scanning again"
        case let .recoveryFailed(action, error): return "supervision: \(Self.stepName(action)) failed: \(error)"
        case let .stopped(adapter): return "scanning stopped on \(adapter)"
        case let .advertising(adapter, extended, power, requested):
            return "identity beacon advertising on \(adapter) with \(extended ? "extended" : "legacy") commands, "
                + "tx power \(power.map { "\($0) dBm" } ?? "not reported") (asked \(requested) dBm)"
        case let .advertisingFailed(adapter, error):
            return "identity beacon not advertising on \(adapter) (scanning goes on): \(error)"
        }
    }

    static func stepName(_ action: ScanSupervisor.Action) -> String {
        switch action {
        case .restartScan: "scan restart"
        case let .powerCycle(_, attempt): "adapter power cycle (attempt \(attempt))"
        case let .reopen(_, attempt): "adapter reopen (attempt \(attempt))"
        }
    }

    static func describe(_ action: ScanSupervisor.Action) -> String {
        let reason: ScanSupervisor.Reason
        switch action {
        case let .restartScan(r), let .powerCycle(r, _), let .reopen(r, _): reason = r
        }
        let why: String
        switch reason {
        case let .stalled(seconds): why = "no advertising report for \(Int(seconds)) s"
        case .fault(.adapterRemoved): why = "adapter removed"
        case let .fault(.readFailed(code)): why = "read failed (errno \(code))"
        case let .fault(.hardwareError(code)):
            why = "controller hardware error 0x\(HexText.hex(byte: code, uppercase: true))"
        case let .recoveryFailed(text): why = "previous step failed: \(text)"
        case .scanTakenOver: why = "the scan was changed behind its back (an LE connection: the kernel leaves it off)"
        }
        return "\(stepName(action)) because \(why)"
    }
}
