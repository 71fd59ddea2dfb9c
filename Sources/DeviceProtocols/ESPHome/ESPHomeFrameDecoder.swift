import BeaconModel

/// Splits the bytes a client sends into frames, for either framing of the ESPHome native API:
///
/// - plaintext: indicator 0x00, varint body size, varint message type, protobuf body;
/// - Noise: indicator 0x01, 2-byte big-endian size, then that many bytes (handshake or encrypted message).
///
/// A state machine without I/O: the server appends what it read and takes frames until `next()` returns nil
/// (more bytes needed). Any violation throws; the connection is then closed with the error as reason.
public struct ESPHomeFrameDecoder: Sendable {
    public enum Framing: Sendable { case plaintext, noise }

    /// One complete frame. Plaintext: `type` and the protobuf `body`. Noise: `type` 0 and the frame's payload.
    public struct Frame: Equatable, Sendable {
        public var type: UInt32
        public var body: [UInt8]
    }

    public let framing: Framing
    /// The largest body (plaintext) or payload (Noise) accepted.
    public let maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(framing: Framing, maxFrameSize: Int = 16 * 1024) {
        self.framing = framing
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes received and not yet consumed by a frame.
    public var bufferedCount: Int { buffer.count - start }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed.
    public mutating func next() throws(ESPHomeProtocolError) -> Frame? {
        switch framing {
        case .plaintext: return try nextPlaintext()
        case .noise: return try nextNoise()
        }
    }

    private mutating func nextPlaintext() throws(ESPHomeProtocolError) -> Frame? {
        var index = start
        guard index < buffer.count else { return nil }
        guard buffer[index] == 0x00 else {
            throw .malformedFrame("indicator 0x\(HexText.hex(byte: buffer[index])) (plaintext frames start with 0x00)")
        }
        index += 1
        guard let size = try varint(at: &index) else { return nil }
        guard size <= UInt64(maxFrameSize) else { throw .oversizedFrame(Int(clamping: size)) }
        guard let type = try varint(at: &index) else { return nil }
        guard type <= UInt64(UInt16.max) else { throw .malformedFrame("message type \(type)") }
        guard buffer.count - index >= Int(size) else { return nil }
        let body = Array(buffer[index..<index + Int(size)])
        start = index + Int(size)
        return Frame(type: UInt32(type), body: body)
    }

    private mutating func nextNoise() throws(ESPHomeProtocolError) -> Frame? {
        guard buffer.count - start >= 1 else { return nil }
        guard buffer[start] == 0x01 else {
            throw .malformedFrame("indicator 0x\(HexText.hex(byte: buffer[start])) (encrypted frames start with 0x01)")
        }
        guard buffer.count - start >= 3 else { return nil }
        let size = Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        guard size <= maxFrameSize else { throw .oversizedFrame(size) }
        guard buffer.count - start - 3 >= size else { return nil }
        let body = Array(buffer[start + 3..<start + 3 + size])
        start += 3 + size
        return Frame(type: 0, body: body)
    }

    /// A varint starting at `index`; nil when incomplete. At most 5 bytes (32 bits) are accepted.
    private func varint(at index: inout Int) throws(ESPHomeProtocolError) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift < 35 else { throw .malformedFrame("varint longer than 5 bytes") }
        }
    }
}

/// Frame encoders for both framings.
public enum ESPHomeFrameEncoder {
    /// A plaintext frame: 0x00, varint size, varint type, body.
    public static func plaintext(type: UInt32, body: [UInt8], into out: inout [UInt8]) {
        var header = ProtobufWriter(capacity: 8)
        header.varint(0)
        header.varint(UInt64(body.count))
        header.varint(UInt64(type))
        out.append(contentsOf: header.bytes)
        out.append(contentsOf: body)
    }

    /// The plaintext of an encrypted message: 2-byte type and 2-byte size (big endian), then the body.
    public static func noisePlaintext(type: UInt32, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 4)
        out.append(UInt8(truncatingIfNeeded: type >> 8))
        out.append(UInt8(truncatingIfNeeded: type))
        out.append(UInt8(truncatingIfNeeded: body.count >> 8))
        out.append(UInt8(truncatingIfNeeded: body.count))
        out.append(contentsOf: body)
        return out
    }

    /// A Noise frame around `payload`: 0x01 and the 2-byte big-endian size.
    public static func noise(payload: [UInt8], into out: inout [UInt8]) {
        out.append(0x01)
        out.append(UInt8(truncatingIfNeeded: payload.count >> 8))
        out.append(UInt8(truncatingIfNeeded: payload.count))
        out.append(contentsOf: payload)
    }

    /// Splits the plaintext of a decrypted message into type and body.
    public static func parseNoisePlaintext(_ bytes: [UInt8]) throws(ESPHomeProtocolError) -> (
        type: UInt32, body: ArraySlice<UInt8>
    ) {
        guard bytes.count >= 4 else { throw .malformedFrame("encrypted message shorter than its 4-byte header") }
        let type = UInt32(bytes[0]) << 8 | UInt32(bytes[1])
        let size = Int(bytes[2]) << 8 | Int(bytes[3])
        guard size == bytes.count - 4 else {
            throw .malformedFrame("encrypted message says \(size) bytes, carries \(bytes.count - 4)")
        }
        return (type, bytes[4...])
    }
}
