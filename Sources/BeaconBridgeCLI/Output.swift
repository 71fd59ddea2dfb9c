#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// Unbuffered writes to stdout / stderr without Foundation.
public enum Output {
    public static func stdout(_ text: String) { write(text + "\n", to: 1) }
    public static func stderr(_ text: String) { write(text + "\n", to: 2) }

    /// A failed write is ignored: there is nowhere left to report it.
    public static func write(_ text: String, to fd: Int32) { _ = FileDescriptorWrite.all(fd, text) }
}
