#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to stdout / stderr without Foundation.
public enum Output {
    public static func stdout(_ text: String) { write(text + "\n", to: 1) }
    public static func stderr(_ text: String) { write(text + "\n", to: 2) }

    public static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }
}
