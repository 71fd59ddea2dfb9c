import BeaconRuntime
import HCIScanner
import Synchronization

/// When the daemon's loop last handled its once-a-second tick: the systemd watchdog's health check.
final class LoopHeartbeat: Sendable {
    /// Monotonic milliseconds of the last beat.
    private let last = Atomic<Int64>(Int64(SystemClock.monotonic() * 1000))

    func beat() { last.store(Int64(SystemClock.monotonic() * 1000), ordering: .relaxed) }

    /// True while the loop beat within the last 10 s.
    func isAlive() -> Bool { Int64(SystemClock.monotonic() * 1000) - last.load(ordering: .relaxed) < 10_000 }
}
