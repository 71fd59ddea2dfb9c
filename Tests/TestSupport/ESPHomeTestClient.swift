#if canImport(Testing)
// Test-only (uses `#require`): the static release build, which links TestSupport for the bench, has no Testing.
import DeviceProtocols
import BeaconRuntime
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A plaintext ESPHome API client over a real TCP connection to 127.0.0.1, for the proxy's server and daemon tests: sends
/// messages, and waits (bounded) for the next message of a type, counting advertisements it passes.
public final class ESPHomeTestClient {
    /// The socket, -1 once closed.
    public private(set) var fd: Int32
    private var decoder = ESPHomeFrameDecoder(framing: .plaintext)
    private var backlog: [(type: UInt32, body: [UInt8])] = []
    public private(set) var advertisementMessages = 0

    public init(port: Int) throws {
        fd = try #require(connectLoopbackTCP(port: port), "connect to 127.0.0.1:\(port): errno \(errno)")
    }

    deinit { close() }

    /// Idempotent. It closed the descriptor again at deinit after a test's own `close()`: in the suite's one
    /// process the number by then often belonged to another test's socket (a test subscriber's MQTT connection,
    /// a daemon's HCI feed, a GATT peer's link), which broke that test now and then: QoS 0 messages lost across
    /// the subscriber's reconnect, a daemon whose feed ended (exit 69), a GATT read failing as disconnected.
    public func close() {
        guard fd >= 0 else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        fd = -1
    }

    public func send(_ type: UInt32, _ body: [UInt8] = []) {
        var out: [UInt8] = []
        ESPHomeFrameEncoder.plaintext(type: type, body: body, into: &out)
        _ = out.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The body of the next message of `type` within `timeout` seconds (others kept for later, advertisements
    /// counted and dropped); nil on timeout or when the server closed.
    public func next(_ type: UInt32, timeout: Double = 10) throws -> [UInt8]? {
        let deadline = SystemClock.monotonic() + timeout
        while true {
            if let index = backlog.firstIndex(where: { $0.type == type }) { return backlog.remove(at: index).body }
            let now = SystemClock.monotonic()
            guard now < deadline else { return nil }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32((deadline - now) * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            decoder.append(buffer[0..<count])
            while let frame = try decoder.next() {
                if frame.type == ESPHomeMessageType.bluetoothLERawAdvertisementsResponse {
                    advertisementMessages += 1
                } else if backlog.count < 1000 {
                    backlog.append((frame.type, frame.body))
                }
            }
        }
    }

    /// The fields of the next message of `type` (the test fails when it does not come).
    public func fields(_ type: UInt32, timeout: Double = 10) throws -> [Int: ProtobufReader.Value] {
        let body = try #require(try next(type, timeout: timeout), "no message of type \(type) within \(timeout) s")
        return try Self.fields(body)
    }

    public static func fields(_ body: [UInt8]) throws -> [Int: ProtobufReader.Value] {
        var reader = ProtobufReader(body[...])
        var out: [Int: ProtobufReader.Value] = [:]
        while let (field, value) = try reader.next() { out[field] = value }
        return out
    }

    /// Every occurrence of each field (repeated fields).
    public static func all(_ body: ArraySlice<UInt8>) throws -> [(Int, ProtobufReader.Value)] {
        var reader = ProtobufReader(body)
        var out: [(Int, ProtobufReader.Value)] = []
        while let (field, value) = try reader.next() { out.append((field, value)) }
        return out
    }

    /// Packed varints of a `repeated uint64` field.
    public static func packed(_ value: ProtobufReader.Value?) -> [UInt64] {
        guard case let .bytes(slice)? = value else { return [] }
        var out: [UInt64] = []
        var current: UInt64 = 0
        var shift: UInt64 = 0
        for byte in slice {
            current |= UInt64(byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0 {
                out.append(current)
                current = 0
                shift = 0
            }
        }
        return out
    }

    /// A `BluetoothDeviceRequest` body.
    public static func deviceRequest(_ address: UInt64, kind: UInt64, addressType: UInt64? = nil) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.uint(2, kind)
        if let addressType {
            w.bool(3, true)
            w.uint(4, addressType)
        }
        return w.bytes
    }

    /// A request body with an address, a handle and optional third/fourth fields.
    public static func handleRequest(_ address: UInt64, _ handle: UInt64, flag: Bool? = nil, data: [UInt8]? = nil)
        -> [UInt8]
    {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.uint(2, handle)
        if let flag { w.bool(3, flag) }
        if let data { w.bytes(flag == nil ? 3 : 4, data) }
        return w.bytes
    }
}
#endif
