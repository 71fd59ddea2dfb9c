import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// The ends of a pipe that wakes a thread sleeping in `poll()` (the HCI reading thread, the replay thread):
/// non-blocking and close-on-exec from the start. The corresponding C call is `pipe2`. Both ends are -1 when the
/// pipe could not be made (the sleeping thread then looks at its stop flag now and then instead).
public struct WakePipe: Sendable {
    public let read: Int32
    public let write: Int32

    /// A new pipe, or one whose ends are both -1.
    public static func make() -> WakePipe {
        var ends: [Int32] = [-1, -1]
        guard bb_pipe2(&ends, O_NONBLOCK | O_CLOEXEC) == 0 else { return WakePipe(read: -1, write: -1) }
        return WakePipe(read: ends[0], write: ends[1])
    }

    /// A pipe that is not there (both ends -1), the value before `make()`.
    public static let closed = WakePipe(read: -1, write: -1)

    /// Whether the pipe exists (a thread can be woken through it).
    public var isOpen: Bool { read >= 0 }

    /// Wakes the thread polling `read`. A full pipe already wakes it, so a failed write is not an error.
    public func wake() {
        guard write >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
    }

    /// Closes both ends (the owner's deinit).
    public func close() {
        if read >= 0 { Glibc.close(read) }
        if write >= 0 { Glibc.close(write) }
    }
}
