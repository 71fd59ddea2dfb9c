#if canImport(Glibc)
import Glibc
#endif

/// The one write-all loop of the adapters: `write(2)` until every byte is out, retrying on EINTR and continuing
/// short writes. Returns 0, or the errno of the write that failed (bytes before it were written).
public enum FileDescriptorWrite {
    public static func all(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let count = write(fd, base + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += count
        }
        return 0
    }

    public static func all(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        bytes.withUnsafeBytes { all(fd, $0) }
    }

    public static func all(_ fd: Int32, _ text: String) -> Int32 {
        var text = text
        return text.withUTF8 { all(fd, UnsafeRawBufferPointer($0)) }
    }
}
