#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1:`port`, for the clients of the tests and the bench (the ESPHome API
/// client); nil when it cannot be made (`errno` says why, the socket is closed).
public func connectLoopbackTCP(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard result == 0 else {
        let saved = errno
        close(fd)
        errno = saved
        return nil
    }
    return fd
}
