import CLinux
import DeviceProtocols

#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers of the socket calls the proxy server makes; every descriptor is non-blocking and close-on-exec.
enum ESPHomeSocket {
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// A listening TCP socket on `address`:`port` (port 0: any free port). Returns the descriptor and the bound port.
    /// The corresponding C calls are `socket`, `setsockopt(SO_REUSEADDR)`, `bind`, `listen` and `getsockname`.
    static func listen(address: String, port: Int) throws(Failure) -> (fd: Int32, port: Int) {
        guard let bytes = NetworkAddressRange.parseAddress(address) else {
            throw Failure(call: "inet_pton", code: EINVAL)
        }
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var result: Int32
        if family == AF_INET {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: bytes) }
            result = withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } else {
            var zero: Int32 = 0  // `::` also accepts IPv4 (mapped addresses)
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: bytes) }
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
        guard Glibc.listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "listen", code: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, peer(storage).port)
    }

    /// A pipe with both ends non-blocking and close-on-exec from the start. The corresponding C call is `pipe2`.
    static func nonBlockingPipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard bb_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// The next pending connection, nil when none; non-blocking and close-on-exec from the start (no window in
    /// which a child spawned by another thread inherits it). The corresponding C call is `accept4`.
    static func accept(_ listener: Int32) -> (fd: Int32, address: [UInt8], text: String)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bb_accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
        }
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let (address, port) = peer(storage)
        let text: String
        if address.count == 4 {
            text = address.map(String.init).joined(separator: ".") + ":\(port)"
        } else {
            text = "[" + NetworkAddressRange.format(address) + "]:\(port)"
        }
        return (fd, address, text)
    }

    private static func peer(_ storage: sockaddr_storage) -> (address: [UInt8], port: Int) {
        var copy = storage
        if Int32(storage.ss_family) == AF_INET {
            return withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    (
                        withUnsafeBytes(of: sin.pointee.sin_addr) { Array($0) },
                        Int(UInt16(bigEndian: sin.pointee.sin_port))
                    )
                }
            }
        }
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                (
                    withUnsafeBytes(of: sin6.pointee.sin6_addr) { Array($0) },
                    Int(UInt16(bigEndian: sin6.pointee.sin6_port))
                )
            }
        }
    }
}
