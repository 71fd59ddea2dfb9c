import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// The ends of a pipe that wakes a thread sleeping in `poll()` (the HCI reading thread, the replay thread):
/// non-blocking and close-on-exec from the start. The corresponding C call is `pipe2`.
public enum WakePipe {
    /// A new pipe; (-1, -1) when it cannot be made (the caller then polls its stop flag instead).
    public static func make() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard bb_pipe2(&ends, O_NONBLOCK | O_CLOEXEC) == 0 else { return (-1, -1) }
        return (ends[0], ends[1])
    }
}
