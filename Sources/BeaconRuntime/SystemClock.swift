import BeaconModel

#if canImport(Glibc)
import Glibc
#endif

/// The one place the adapters and the daemon read the clocks (the core never does: it is handed times).
public enum SystemClock {
    /// Wall-clock capture time, seconds since the Unix epoch. The corresponding C call is
    /// `clock_gettime(CLOCK_REALTIME)`.
    public static func realtime() -> Timestamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Monotonic seconds for timeouts and supervision (`clock_gettime(CLOCK_MONOTONIC)`).
    public static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
