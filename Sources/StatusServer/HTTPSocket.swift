import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers of the socket calls the status server makes; every descriptor is non-blocking and close-on-exec.
enum HTTPSocket {
    /// A failed call and its errno.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// A listening TCP socket on `address`:`port` (port 0: any free port); the descriptor and the bound port.
    /// The corresponding C calls are `socket`, `setsockopt(SO_REUSEADDR)`, `bind`, `listen` and `getsockname`.
    static func listen(address: String, port: Int) throws(Failure) -> (fd: Int32, port: Int) {
        var sin = sockaddr_in()
        var sin6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, address, &sin.sin_addr) == 1 {
            family = AF_INET
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        } else if inet_pton(AF_INET6, address, &sin6.sin6_addr) == 1 {
            family = AF_INET6
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        } else {
            throw Failure(call: "inet_pton \(address)", code: EINVAL)
        }
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        if family == AF_INET {
            result = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } else {
            var zero: Int32 = 0  // `::` also accepts IPv4 (mapped addresses)
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            result = withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "bind \(address):\(port)", code: code)
        }
        guard Glibc.listen(fd, 32) == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "listen", code: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, boundPort(storage))
    }

    /// The next pending connection, nil when none; non-blocking and close-on-exec from the start. The
    /// corresponding C call is `accept4`.
    static func accept(_ listener: Int32) -> Int32? {
        while true {
            let fd = bb_accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 {
                // A bounded kernel send buffer: a client that does not read cannot make the kernel hold much.
                var sendBuffer: Int32 = 256 * 1024
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            // A connection reset before it was accepted: try the next.
            if errno == ECONNABORTED || errno == EINTR { continue }
            return nil
        }
    }

    private static func boundPort(_ storage: sockaddr_storage) -> Int {
        var copy = storage
        if Int32(storage.ss_family) == AF_INET {
            return withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
    }

    /// Whether `address` is a loopback address (127.0.0.0/8, ::1).
    static func isLoopback(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        return address == "::1"
    }
}
