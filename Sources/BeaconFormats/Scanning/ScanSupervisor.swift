/// Decides how to recover a scan that stopped delivering: restart the scan, then power-cycle the adapter,
/// with exponential backoff; reopen (with backoff) an adapter that disappeared.
///
/// A stall is "no advertising report for `stallTimeout`". The first stall restarts the scan, a second one
/// without a report in between power-cycles the adapter; while recoveries keep bringing no report (perhaps
/// simply no beacon in range), the stall timeout doubles after each one, up to `maximumStallFactor` times.
///
/// A pure state machine: the scanner feeds it what happened (with the time, from any monotonic clock) and
/// performs the actions it returns, then reports the outcome (`scanStarted` or `recoveryFailed`).
public struct ScanSupervisor: Sendable {
    public struct Policy: Sendable, Equatable {
        /// No advertising report for this long while scanning counts as a stall; 0 disables stall detection.
        public var stallTimeout: Double
        /// Wait before the first retry of a failed power cycle or reopen; doubles per attempt.
        public var initialBackoff: Double
        public var maximumBackoff: Double
        /// Cap of the stall timeout's growth while recoveries bring no report.
        public var maximumStallFactor: Double

        public init(
            stallTimeout: Double, initialBackoff: Double = 1, maximumBackoff: Double = 60,
            maximumStallFactor: Double = 32
        ) {
            self.stallTimeout = stallTimeout
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.maximumStallFactor = maximumStallFactor
        }
    }

    /// Something that went wrong with a running scan.
    public enum Fault: Sendable, Equatable {
        /// The adapter was unregistered (unplugged, driver unloaded): reads fail with ENODEV or similar.
        case adapterRemoved
        /// A read or poll on the HCI socket failed with this errno.
        case readFailed(errno: Int32)
        /// The controller sent an HCI Hardware Error event with this code.
        case hardwareError(code: UInt8)
    }

    public enum Reason: Sendable, Equatable {
        case stalled(seconds: Double)
        case fault(Fault)
        /// The previous recovery step failed (its error, as text).
        case recoveryFailed(String)
        /// Someone else changed the scan: the kernel, which takes the scan over to make an LE connection (a GATT
        /// connect) and leaves it off afterwards, or another program's LE Set (Extended) Scan Enable; seen as an
        /// LE Connection Complete or a Command Complete of a scan enable this scanner did not send.
        case scanTakenOver
    }

    public enum Action: Sendable, Equatable {
        /// Disable and re-enable scanning on the open socket.
        case restartScan(reason: Reason)
        /// Close, bring the adapter down and up (HCIDEVDOWN/HCIDEVUP), reopen and reconfigure.
        case powerCycle(reason: Reason, attempt: Int)
        /// Close and open the adapter again (it disappeared), then configure.
        case reopen(reason: Reason, attempt: Int)
    }

    package enum State: Sendable, Equatable {
        case idle
        /// `since`: scan start or last report.
        case scanning(since: Double)
        /// A recovery action is being performed.
        case recovering(Action)
        /// Waiting until `notBefore` to perform `next`.
        case backingOff(next: Action, notBefore: Double)
    }

    public let policy: Policy
    private(set) var state: State = .idle
    /// Recoveries done since the last advertising report.
    public private(set) var quietRecoveries = 0
    /// When to enable the scan again after someone else changed it (`scanTakenOver`).
    public private(set) var rescanAt: Double?
    /// How long after the last sign of a take-over the scan is enabled again: the kernel's own commands around
    /// a connection (its scan disable, the connection's set-up) come first; each new sign pushes it back.
    public static let takeOverSettle: Double = 0.5

    public init(policy: Policy) { self.policy = policy }

    /// The time the caller must call `tick` at the latest (stall deadline or end of backoff); nil if none.
    public var nextDeadline: Double? {
        switch state {
        case .idle, .recovering: return nil
        case let .scanning(since):
            let stall = policy.stallTimeout > 0 ? since + currentStallTimeout : nil
            guard let rescanAt else { return stall }
            return min(rescanAt, stall ?? rescanAt)
        case let .backingOff(_, notBefore): return notBefore
        }
    }

    /// True while a recovery is in progress or scheduled.
    public var isRecovering: Bool {
        switch state {
        case .recovering, .backingOff: return true
        case .idle, .scanning: return false
        }
    }

    /// The stall timeout in force: `stallTimeout`, doubled per quiet recovery beyond the first two, capped.
    public var currentStallTimeout: Double {
        let doublings = min(max(quietRecoveries - 1, 0), 30)
        return policy.stallTimeout * min(Double(1 << doublings), max(1, policy.maximumStallFactor))
    }

    /// Scanning is (again) enabled: after the first start or a successful recovery action.
    public mutating func scanStarted(at now: Double) {
        switch state {
        case .recovering(.restartScan(reason: .scanTakenOver)):
            break  // not a recovery from a fault: the stall escalation does not count it
        case .recovering, .backingOff:
            quietRecoveries += 1
        case .idle, .scanning:
            quietRecoveries = 0
        }
        state = .scanning(since: now)
    }

    /// An advertising report arrived: the scan is healthy.
    public mutating func reportReceived(at now: Double) {
        guard case .scanning = state else { return }
        state = .scanning(since: now)
        quietRecoveries = 0
    }

    /// Someone else changed the scan (an LE Connection Complete of any status, or a Command Complete of a scan
    /// enable this scanner did not send): enable it again `takeOverSettle` seconds later. Linux stops the scan to
    /// connect (or scans with its own accept list for the device) and leaves it off afterwards.
    public mutating func scanTakenOver(at now: Double) {
        guard case .scanning = state else { return }
        rescanAt = now + Self.takeOverSettle
    }

    /// Checks for a stall, the end of a backoff, or a scan to enable again after a connection.
    public mutating func tick(at now: Double) -> Action? {
        switch state {
        case .idle, .recovering: return nil
        case .scanning where rescanAt.map { now >= $0 } ?? false:
            rescanAt = nil
            let action = Action.restartScan(reason: .scanTakenOver)
            state = .recovering(action)
            return action
        case let .scanning(since):
            guard policy.stallTimeout > 0, now - since >= currentStallTimeout else { return nil }
            let reason = Reason.stalled(seconds: now - since)
            // A stall right after a recovery that brought no report escalates.
            let action: Action =
                quietRecoveries == 0
                ? .restartScan(reason: reason)
                : .powerCycle(reason: reason, attempt: quietRecoveries)
            state = .recovering(action)
            return action
        case let .backingOff(next, notBefore):
            guard now >= notBefore else { return nil }
            state = .recovering(next)
            return next
        }
    }

    /// A fault on the running scan.
    public mutating func faultOccurred(_ fault: Fault, at now: Double) -> Action? {
        if case .recovering = state { return nil }
        let reason = Reason.fault(fault)
        let action: Action
        switch fault {
        case .adapterRemoved: action = .reopen(reason: reason, attempt: 1)
        case .hardwareError: action = .powerCycle(reason: reason, attempt: 1)
        case .readFailed: action = .restartScan(reason: reason)
        }
        state = .recovering(action)
        return action
    }

    /// The recovery action in progress failed. Returns the next action to perform now (escalation from a scan
    /// restart to a power cycle), or nil when the next attempt waits for its backoff (see `nextDeadline`).
    public mutating func recoveryFailed(at now: Double, error: String, adapterGone: Bool = false) -> Action? {
        guard case let .recovering(failed) = state else { return nil }
        let reason = Reason.recoveryFailed(error)
        switch failed {
        case .restartScan:
            let next: Action =
                adapterGone ? .reopen(reason: reason, attempt: 1) : .powerCycle(reason: reason, attempt: 1)
            state = .recovering(next)
            return next
        case let .powerCycle(_, attempt), let .reopen(_, attempt):
            let next: Action =
                adapterGone
                ? .reopen(reason: reason, attempt: attempt + 1)
                : .powerCycle(reason: reason, attempt: attempt + 1)
            state = .backingOff(next: next, notBefore: now + backoff(afterAttempt: attempt))
            return nil
        }
    }

    /// The wait after a failed attempt: initial * 2^(attempt-1), capped.
    public func backoff(afterAttempt attempt: Int) -> Double {
        let exponent = min(max(attempt - 1, 0), 30)
        return min(policy.initialBackoff * Double(1 << exponent), policy.maximumBackoff)
    }
}
