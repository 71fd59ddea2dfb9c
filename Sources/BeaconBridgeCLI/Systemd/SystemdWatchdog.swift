#if canImport(Glibc)
import Glibc
#endif

/// systemd's software watchdog: when `$WATCHDOG_USEC` is set (by `WatchdogSec=`), the service must send
/// `WATCHDOG=1` more often than that; this pings at half the period, and only while the daemon reports
/// itself healthy, so a hung scanner gets the service restarted instead of kept alive by a blind timer.
public struct SystemdWatchdog: Sendable, Equatable {
    /// Half of `$WATCHDOG_USEC`.
    public let interval: Duration
    public let notifier: SystemdNotifier

    /// Nil when the watchdog is not enabled for this process: `$NOTIFY_SOCKET` or `$WATCHDOG_USEC` unset or
    /// not a positive number, or `$WATCHDOG_PID` set to another process.
    public init?(environment: [String: String], pid: Int32 = getpid()) {
        guard let notifier = SystemdNotifier(environment: environment),
            let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0
        else { return nil }
        if let owner = environment["WATCHDOG_PID"], !owner.isEmpty, Int32(owner) != pid { return nil }
        self.notifier = notifier
        self.interval = .microseconds(Int64(clamping: usec / 2))
    }

    /// One beat: pings when `isHealthy`; returns whether it pinged.
    @discardableResult
    public func beat(isHealthy: Bool) throws(SystemdNotifyError) -> Bool {
        guard isHealthy else { return false }
        try notifier.watchdog()
        return true
    }

    /// Beats every `interval` until the task is cancelled. Send failures are passed to `onError` (to log)
    /// and do not stop the loop.
    public func run(
        isHealthy: @Sendable () async -> Bool,
        onError: @Sendable (SystemdNotifyError) -> Void = { _ in }
    ) async {
        while !Task.isCancelled {
            do {
                try beat(isHealthy: await isHealthy())
            } catch {
                onError(error)
            }
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
