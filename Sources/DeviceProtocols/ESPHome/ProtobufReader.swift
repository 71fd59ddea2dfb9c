/// Reads the fields of one protocol buffer message (proto3 wire format). Every read is bounds checked and
/// fails with `ESPHomeProtocolError.malformedMessage`; unknown fields are skipped as the format requires.
public struct ProtobufReader {
    public enum Value: Equatable {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    /// The next field, or nil at the end of the message.
    public mutating func next() throws(ESPHomeProtocolError) -> (field: Int, value: Value)? {
        guard index < bytes.endIndex else { return nil }
        let key = try varint()
        let field = key >> 3
        guard field >= 1, field <= 536_870_911 else { throw .malformedMessage("field number \(field)") }
        switch key & 7 {
        case 0:
            return (Int(field), .varint(try varint()))
        case 1:
            return (Int(field), .fixed64(try fixed(8)))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - index) else {
                throw .malformedMessage("field \(field) is longer than the message")
            }
            let start = index
            index += Int(length)
            return (Int(field), .bytes(bytes[start..<index]))
        case 5:
            return (Int(field), .fixed32(UInt32(truncatingIfNeeded: try fixed(4))))
        default:
            throw .malformedMessage("unsupported wire type \(key & 7) of field \(field)")
        }
    }

    private mutating func varint() throws(ESPHomeProtocolError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.endIndex else { throw .malformedMessage("truncated varint") }
            let byte = bytes[index]
            index += 1
            guard shift < 64 else { throw .malformedMessage("varint longer than 10 bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    private mutating func fixed(_ size: Int) throws(ESPHomeProtocolError) -> UInt64 {
        guard bytes.endIndex - index >= size else { throw .malformedMessage("truncated fixed-size field") }
        var value: UInt64 = 0
        for offset in 0..<size { value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
        index += size
        return value
    }
}

extension ProtobufReader.Value {
    /// The value of a varint field (0 for other wire types, as a decoder ignoring a type mismatch would).
    public var integer: UInt64 {
        if case let .varint(value) = self { return value }
        return 0
    }

    public var text: String {
        if case let .bytes(slice) = self { return String(decoding: slice, as: UTF8.self) }
        return ""
    }
}
