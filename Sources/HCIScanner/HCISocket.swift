import BeaconFormats
import BeaconModel
import CBlueZ

#if canImport(Glibc)
import Glibc
import BeaconRuntime
#endif

/// A raw HCI socket bound to one adapter: filter, commands, event reads.
///
/// Not Sendable: owned by the scanner's reading thread (or one test) for its whole life.
final class HCISocket {
    /// Outcome of one read.
    enum ReadResult {
        /// Event bytes (event code first) and the capture time (CLOCK_REALTIME right after the read).
        case event([UInt8], Timestamp)
        case timeout
        case failed(errno: Int32)
    }

    let deviceID: Int32
    /// `hci0`, for messages.
    let label: String
    private(set) var fd: Int32
    private var savedFilter: hci_filter?
    /// LE Meta events that arrived while waiting for a command's reply; returned by the next reads.
    private var pending: [([UInt8], Timestamp)] = []
    /// A read failure that followed events in the same drain, returned by the next `readEvents`.
    private var deferredFailure: Int32?
    /// Called with every command sent and every event read, with its time (for the btsnoop recording).
    var tap: ((_ packet: [UInt8], _ received: Bool, _ time: Timestamp) -> Void)?
    /// The control message that carries the kernel's receive time of each event (`HCI_TIME_STAMP` on an HCI
    /// socket, `SO_TIMESTAMP` on a feed), nil when the socket option could not be set (events then carry the
    /// time they were read).
    private var timestampControl: (level: Int32, type: Int32)?

    /// Opens a raw HCI socket and binds it to the adapter.
    /// The corresponding C calls are `socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)` and `bind`.
    init(deviceID: Int32, label: String) throws(HCIError) {
        self.deviceID = deviceID
        self.label = label
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw HCIError.system(errno, adapter: label, call: "socket(AF_BLUETOOTH, BTPROTO_HCI)") }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(truncatingIfNeeded: deviceID)
        address.hci_channel = UInt16(HCI_CHANNEL_RAW)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HCIError.system(code, adapter: label, call: "bind(\(label))")
        }
        self.fd = fd
        var on: Int32 = 1
        if setsockopt(fd, SOL_HCI, HCI_TIME_STAMP, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 {
            timestampControl = (Int32(SOL_HCI), Int32(HCI_CMSG_TSTAMP))
        }
    }

    /// Adopts an already connected socket that carries H4 event packets, one per datagram (a
    /// `SOCK_SEQPACKET` socket pair standing in for a controller: `beaconbridge run --hci-feed FD`). No HCI
    /// filter or command is ever applied to it; the scanner only reads.
    init(adopting fd: Int32, label: String) {
        self.deviceID = -1
        self.label = label
        self.fd = fd
        var on: Int32 = 1
        if setsockopt(fd, SOL_SOCKET, bb_so_timestamp(), &on, socklen_t(MemoryLayout<Int32>.size)) == 0 {
            timestampControl = (Int32(SOL_SOCKET), bb_so_timestamp())
        }
    }

    deinit { close() }

    /// Saves the socket's current HCI filter, to be put back by `restoreFilter()`.
    func saveFilter() throws(HCIError) {
        var filter = hci_filter()
        var length = socklen_t(MemoryLayout<hci_filter>.size)
        guard getsockopt(fd, SOL_HCI, HCI_FILTER, &filter, &length) == 0 else {
            throw HCIError.system(errno, adapter: label, call: "getsockopt(HCI_FILTER)")
        }
        savedFilter = filter
    }

    /// Lets through HCI event packets with the given event codes only.
    func setEventFilter(_ events: [Int32]) throws(HCIError) {
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        for event in events { hci_filter_set_event(event, &filter) }
        guard setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            throw HCIError.system(errno, adapter: label, call: "setsockopt(HCI_FILTER)")
        }
    }

    /// Puts back the filter saved by `saveFilter()`; best effort (the socket may already be dead).
    func restoreFilter() {
        guard fd >= 0, var filter = savedFilter else { return }
        _ = setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
    }

    /// Sends a command and waits for its Command Complete or Command Status. Returns the return parameters
    /// (status byte first). A non-zero status throws `commandFailed`. The socket's filter must let Command
    /// Complete and Command Status through.
    @discardableResult
    func send(_ command: HCICommand, timeout: Double = 2) throws(HCIError) -> [UInt8] {
        let packet = command.packet
        let written = packet.withUnsafeBytes { raw in
            var result: Int
            repeat { result = write(fd, raw.baseAddress, raw.count) } while result < 0 && errno == EINTR
            return result
        }
        guard written == packet.count else {
            throw HCIError.system(written < 0 ? errno : EIO, adapter: label, call: command.name)
        }
        tap?(packet, false, SystemClock.realtime())
        let deadline = SystemClock.monotonic() + timeout
        while true {
            let remaining = deadline - SystemClock.monotonic()
            guard remaining > 0 else { throw HCIError(kind: .commandTimeout, adapter: label, call: command.name) }
            switch readRaw(timeoutMilliseconds: Int32(min(remaining * 1000, 1000)) + 1) {
            case .timeout: continue
            case let .failed(code): throw HCIError.system(code, adapter: label, call: command.name)
            case let .event(bytes, time):
                guard let reply = HCICommandReply(event: bytes), reply.opcode == command.opcode else {
                    if bytes.first == UInt8(EVT_LE_META_EVENT) { pending.append((bytes, time)) }
                    continue
                }
                if let status = reply.status, status != 0 {
                    throw HCIError(kind: .commandFailed(status: status), adapter: label, call: command.name)
                }
                if case let .complete(_, parameters) = reply { return parameters }
                return [0]
            }
        }
    }

    /// Outcome of one `readEvents` call.
    enum BatchResult: Equatable {
        /// This many events were appended.
        case events(Int)
        case timeout
        case failed(errno: Int32)
    }

    /// Room for the largest event (code, length, 255 parameter bytes).
    static let maxEventSize = Int(HCI_MAX_EVENT_SIZE)

    /// Waits at most `timeoutMilliseconds` for the socket to become readable, then drains it without waiting
    /// again: every event already queued in the kernel, up to `limit`, is appended to `batch` (event code
    /// first, H4 byte stripped). Up to `chunkLimit` datagrams come in one `recvmmsg` system call into one
    /// reused buffer, each then copied once into its own array of its own size (one system call per chunk
    /// instead of one per event plus the one that finds the socket empty). A read failure after some events is
    /// returned by the next call, so those events are not lost. `wakeDescriptor` (when >= 0) ends the wait too
    /// when it becomes readable (`.timeout`, the caller's stop pipe).
    func readEvents(
        into batch: inout [CapturedHCIEvent], timeoutMilliseconds: Int32, limit: Int, wakeDescriptor: Int32 = -1
    ) -> BatchResult {
        if !pending.isEmpty {
            for (bytes, time) in pending { batch.append(CapturedHCIEvent(timestamp: time, bytes: bytes)) }
            defer { pending.removeAll() }
            return .events(pending.count)
        }
        if let code = deferredFailure {
            deferredFailure = nil
            return .failed(errno: code)
        }
        // poll ignores a negative descriptor, so without a wake-up pipe this waits on the socket alone.
        var descriptors = (
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        )
        let ready = withUnsafeMutablePointer(to: &descriptors) { pair in
            pair.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeoutMilliseconds) }
        }
        if ready < 0 { return errno == EINTR ? .timeout : .failed(errno: errno) }
        if ready == 0 || descriptors.0.revents == 0 { return .timeout }
        var count = 0
        var consumed = 0
        while consumed < limit {
            let wanted = min(limit - consumed, Self.chunkLimit)
            switch receiveChunk(wanted, into: &batch) {
            case let .received(datagrams, events):
                count += events
                consumed += datagrams
                // Fewer than asked for: the socket is empty now.
                if datagrams < wanted { return count > 0 ? .events(count) : .timeout }
            case let .ended(events):
                // The peer closed the socket (a feed): what came before it first, the end next time.
                count += events
                guard count > 0 else { return .failed(errno: EPIPE) }
                deferredFailure = EPIPE
                return .events(count)
            case let .failed(code):
                if code == EINTR || code == EAGAIN { return count > 0 ? .events(count) : .timeout }
                guard count > 0 else { return .failed(errno: code) }
                deferredFailure = code
                return .events(count)
            }
        }
        return .events(count)
    }

    /// Datagrams received by one `recvmmsg` at most.
    static let chunkLimit = 64

    /// The reused receive state (made on first use): `chunkLimit` slots of an H4 byte and `maxEventSize` bytes
    /// each, `chunkLimit` slots of control data (`controlSize` bytes each, the receive times), and the
    /// `recvmmsg` headers and vectors that point into them. Made once: a temporary allocation of the headers
    /// per call was a 4 KiB `malloc` per read, which made glibc consolidate its free lists every time.
    private struct ChunkStorage {
        let buffer: UnsafeMutableRawBufferPointer
        let vectors: UnsafeMutableBufferPointer<iovec>
        let messages: UnsafeMutableBufferPointer<bb_mmsghdr>

        init() {
            buffer = .allocate(byteCount: HCISocket.chunkLimit * (slotSize + controlSize), alignment: 16)
            vectors = .allocate(capacity: HCISocket.chunkLimit)
            messages = .allocate(capacity: HCISocket.chunkLimit)
            for index in 0..<HCISocket.chunkLimit {
                vectors[index] = iovec(iov_base: buffer.baseAddress! + index * slotSize, iov_len: slotSize)
            }
        }

        func deallocate() {
            buffer.deallocate()
            vectors.deallocate()
            messages.deallocate()
        }
    }
    private var chunkStorage: ChunkStorage?
    private static let slotSize = 1 + maxEventSize
    /// Room for one receive-time control message, rounded up to 16 bytes.
    private static let controlSize = (Int(bb_cmsg_timestamp_space()) + 15) / 16 * 16

    enum ChunkResult {
        /// Datagrams received, and how many of them were events appended to the batch.
        case received(datagrams: Int, events: Int)
        /// An empty datagram: the end of the stream (after `events` events appended).
        case ended(events: Int)
        case failed(errno: Int32)
    }

    /// One `recvmmsg` (non-blocking) of up to `wanted` datagrams; every HCI event among them is appended to
    /// `batch` with the kernel's receive time (when the socket gives it; otherwise the time right after the
    /// call), so the pause between reads (`BatchWindow`) does not move capture times.
    private func receiveChunk(_ wanted: Int, into batch: inout [CapturedHCIEvent]) -> ChunkResult {
        let storage = chunkStorage ?? ChunkStorage()
        chunkStorage = storage
        let slot = Self.slotSize
        let controlSize = Self.controlSize
        let base = storage.buffer.baseAddress!
        let controls = base + Self.chunkLimit * slot
        let stamp = timestampControl
        let tap = self.tap
        let messages = storage.messages
        // The kernel writes back each header's control length and flags and the message length: set afresh.
        for index in 0..<wanted {
            var header = msghdr()
            header.msg_iov = storage.vectors.baseAddress! + index
            header.msg_iovlen = 1
            if stamp != nil {
                header.msg_control = controls + index * controlSize
                header.msg_controllen = controlSize
            }
            messages[index] = bb_mmsghdr(msg_hdr: header, msg_len: 0)
        }
        let received = Int(bb_recvmmsg(fd, messages.baseAddress, UInt32(wanted), Int32(MSG_DONTWAIT)))
        if received < 0 { return .failed(errno: errno) }
        if received == 0 { return .ended(events: 0) }
        let readTime = SystemClock.realtime()
        var events = 0
        for index in 0..<received {
            let start = base + index * slot
            let length = Int(messages[index].msg_len)
            if length == 0 { return .ended(events: events) }
            // H4 packet type first; the filter only lets events through, but check anyway.
            guard length >= 3, length <= slot, start.load(as: UInt8.self) == UInt8(HCI_EVENT_PKT) else {
                continue
            }
            var time = readTime
            if let stamp {
                let kernel = bb_cmsg_timestamp(&messages[index].msg_hdr, stamp.level, stamp.type)
                // A receive time later than the read (a clock step between the two) is not believed.
                if kernel > 0, kernel <= readTime { time = kernel }
            }
            let bytes = [UInt8](UnsafeRawBufferPointer(start: start + 1, count: length - 1))
            if let tap { tap([UInt8(HCI_EVENT_PKT)] + bytes, true, time) }
            batch.append(CapturedHCIEvent(timestamp: time, bytes: bytes))
            events += 1
        }
        return .received(datagrams: received, events: events)
    }

    /// Receives one packet into a new event array (H4 indicator into a separate byte, through `recvmsg`'s
    /// scatter list). `.timeout` for "nothing there" (EAGAIN, EINTR) and for a packet that is not an event.
    private func receive(flags: Int32) -> ReadResult {
        var indicator: UInt8 = 0
        var received = 0
        var code: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: Self.maxEventSize) { buffer, initialized in
            received = withUnsafeMutablePointer(to: &indicator) { indicatorPointer in
                withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { list in
                    list[0] = iovec(iov_base: UnsafeMutableRawPointer(indicatorPointer), iov_len: 1)
                    list[1] = iovec(iov_base: UnsafeMutableRawPointer(buffer.baseAddress), iov_len: buffer.count)
                    var message = msghdr()
                    message.msg_iov = list.baseAddress
                    message.msg_iovlen = 2
                    return recvmsg(fd, &message, flags)
                }
            }
            code = received < 0 ? errno : 0
            initialized = max(0, received - 1)
        }
        if received < 0 { return code == EINTR || code == EAGAIN ? .timeout : .failed(errno: code) }
        if received == 0 { return .failed(errno: EPIPE) }
        let time = SystemClock.realtime()
        // H4 packet type first; the filter only lets events through, but check anyway.
        guard received >= 3, indicator == UInt8(HCI_EVENT_PKT) else { return .timeout }
        if let tap { tap([indicator] + bytes, true, time) }
        return .event(bytes, time)
    }

    private func readRaw(timeoutMilliseconds: Int32) -> ReadResult {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        if ready < 0 { return errno == EINTR ? .timeout : .failed(errno: errno) }
        if ready == 0 { return .timeout }
        return receive(flags: Int32(MSG_DONTWAIT))
    }

    func close() {
        chunkStorage?.deallocate()
        chunkStorage = nil
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
