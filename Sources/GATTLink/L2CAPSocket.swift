import BeaconModel
import BeaconRuntime
import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// An LE L2CAP socket on the ATT fixed channel (CID 4): one ATT PDU per datagram (`SOCK_SEQPACKET`).
///
/// Non-blocking from the start; `receive` waits in `poll` with a timeout, so no call here blocks for longer
/// than its caller asked. Not Sendable: owned by one connection (one thread) for its whole life.
public final class L2CAPSocket {
    /// The ATT fixed channel (Core spec Vol 3 Part A 2.1).
    public static let attChannel: UInt16 = 4
    /// Room for the largest ATT PDU (ATT_MTU at most 517) and more: a longer datagram is cut here, and the
    /// GATT client refuses anything longer than its MTU anyway.
    static let receiveBufferSize = 1024

    /// The descriptor, -1 once closed.
    public private(set) var fd: Int32
    /// The peer, for messages.
    public let peer: String

    /// Adopts an already connected descriptor that carries one PDU per datagram (an accepted L2CAP socket, or a
    /// `socketpair(AF_UNIX, SOCK_SEQPACKET)` standing in for one in tests). Made non-blocking here.
    public init(adopting fd: Int32, peer: String) {
        self.fd = fd
        self.peer = peer
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit { close() }

    /// Connects to `peer` on the ATT channel from the adapter with address `adapter`, waiting at most `timeout`
    /// seconds for the LE connection. Closing the socket on a timeout makes the kernel cancel its LE Create
    /// Connection. The corresponding C calls are `socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP)`, `bind`,
    /// `connect` (EINPROGRESS), `poll` and `getsockopt(SO_ERROR)`.
    public static func connect(
        from adapter: BluetoothAddress, adapterName: String, to peer: BluetoothAddress, randomAddress: Bool,
        timeout: Double
    ) throws(GATTLinkError) -> L2CAPSocket {
        let label = peer.description
        let socket = try open(label: label)
        try socket.bind(adapter, addressType: UInt8(BDADDR_LE_PUBLIC), step: "bind(\(adapterName))")
        var address = socketAddress(
            peer, addressType: UInt8(randomAddress ? BDADDR_LE_RANDOM : BDADDR_LE_PUBLIC))
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        if started != 0 && errno != EINPROGRESS {
            throw GATTLinkError.system(errno, peer: label, step: "connect")
        }
        let deadline = SystemClock.monotonic() + timeout
        while started != 0 {
            let remaining = deadline - SystemClock.monotonic()
            guard remaining > 0 else {
                socket.close()
                throw GATTLinkError(.connectTimeout(seconds: timeout), peer: label, step: "connect")
            }
            var descriptor = pollfd(fd: socket.fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 1000)) + 1)
            if ready < 0 && errno != EINTR { throw GATTLinkError.system(errno, peer: label, step: "connect: poll") }
            guard ready > 0 else { continue }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else {
                throw GATTLinkError.system(errno, peer: label, step: "connect: getsockopt(SO_ERROR)")
            }
            if failure != 0 {
                var error = GATTLinkError.system(failure, peer: label, step: "connect")
                if case .connectTimeout = error.kind { error.kind = .connectTimeout(seconds: 0) }
                throw error
            }
            if descriptor.revents & Int16(POLLOUT) != 0 { break }
            if descriptor.revents & Int16(POLLERR | POLLHUP) != 0 {
                throw GATTLinkError(.disconnected, peer: label, step: "connect")
            }
        }
        return socket
    }

    /// A socket listening for LE connections on the ATT channel of the adapter with address `adapter` (the
    /// test peripheral's side). The corresponding C calls are `socket`, `bind` and `listen`.
    public static func listen(on adapter: BluetoothAddress, adapterName: String) throws(GATTLinkError) -> L2CAPSocket {
        let socket = try open(label: adapterName)
        try socket.bind(adapter, addressType: UInt8(BDADDR_LE_PUBLIC), step: "bind(\(adapterName))")
        guard Glibc.listen(socket.fd, 4) == 0 else {
            throw GATTLinkError.system(errno, peer: adapterName, step: "listen")
        }
        return socket
    }

    /// Waits at most `timeoutMilliseconds` for a connection; nil when none came. The corresponding C call is
    /// `accept`.
    public func accept(timeoutMilliseconds: Int32) throws(GATTLinkError) -> L2CAPSocket? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        guard ready > 0 else { return nil }
        var address = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let accepted = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
        }
        guard accepted >= 0 else {
            if errno == EAGAIN || errno == EINTR || errno == ECONNABORTED { return nil }
            throw GATTLinkError.system(errno, peer: peer, step: "accept")
        }
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        let bytes = withUnsafeBytes(of: address.l2_bdaddr.b) { Array($0) }
        let remote = BluetoothAddress(littleEndianBytes: bytes) ?? BluetoothAddress(rawValue: 0)
        return L2CAPSocket(adopting: accepted, peer: remote.description)
    }

    /// Writes one PDU. The corresponding C call is `send` (MSG_NOSIGNAL: a closed peer is an error, not a
    /// signal). A full socket buffer is waited out for at most a second.
    public func send(_ pdu: [UInt8]) -> Int32? {
        guard fd >= 0 else { return EBADF }
        var waited = 0
        while true {
            let sent = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent == pdu.count { return nil }
            if sent >= 0 { return EMSGSIZE }
            guard errno == EAGAIN || errno == EINTR, waited < 20 else { return errno }
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&descriptor, 1, 50)
            waited += 1
        }
    }

    /// Outcome of one `receive`.
    public enum Received: Equatable {
        case pdu([UInt8])
        case timeout
        /// The peer closed the channel (0 bytes read) or the read failed (errno; 0 for an orderly close).
        case closed(errno: Int32)
    }

    /// Waits at most `timeoutMilliseconds` for one PDU. The corresponding C calls are `poll` and `recv`.
    public func receive(timeoutMilliseconds: Int32) -> Received {
        guard fd >= 0 else { return .closed(errno: EBADF) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, max(0, timeoutMilliseconds))
        if ready < 0 { return errno == EINTR ? .timeout : .closed(errno: errno) }
        if ready == 0 { return .timeout }
        var buffer = [UInt8](repeating: 0, count: Self.receiveBufferSize)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno == EAGAIN || errno == EINTR ? .timeout : .closed(errno: errno) }
        if count == 0 { return .closed(errno: 0) }
        return .pdu(Array(buffer.prefix(count)))
    }

    /// Closes the socket (for L2CAP: the kernel drops the link when it was the last user). Idempotent.
    public func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    private static func open(label: String) throws(GATTLinkError) -> L2CAPSocket {
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_BLUETOOTH, type, BTPROTO_L2CAP)
        guard fd >= 0 else {
            throw GATTLinkError.system(errno, peer: label, step: "socket(AF_BLUETOOTH, BTPROTO_L2CAP)")
        }
        return L2CAPSocket(adopting: fd, peer: label)
    }

    private func bind(_ adapter: BluetoothAddress, addressType: UInt8, step: String) throws(GATTLinkError) {
        var address = Self.socketAddress(adapter, addressType: addressType)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        guard bound == 0 else { throw GATTLinkError.system(errno, peer: peer, step: step) }
    }

    /// `sockaddr_l2` for the ATT channel (CID 4, PSM 0) of an LE address.
    private static func socketAddress(_ address: BluetoothAddress, addressType: UInt8) -> sockaddr_l2 {
        var result = sockaddr_l2()
        result.l2_family = sa_family_t(AF_BLUETOOTH)
        result.l2_cid = attChannel.littleEndian
        result.l2_bdaddr_type = addressType
        let bytes = address.littleEndianBytes
        result.l2_bdaddr.b = (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5])
        return result
    }
}
