/// Appends protocol buffer fields (proto3 wire format) to a byte buffer: the subset the ESPHome native API
/// messages of a Bluetooth proxy use (varint, zigzag, length-delimited). Fields equal to their default are
/// written only when `always` is set, as proto3 encoders do.
public struct ProtobufWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// A base-128 varint, least significant group first.
    public mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// The number of bytes `varint(value)` writes.
    public static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    private mutating func tag(_ field: Int, _ wireType: ProtobufWireType) {
        varint(UInt64(field) << 3 | UInt64(wireType.rawValue))
    }

    public mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(value)
    }

    public mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        tag(field, .varint)
        varint(1)
    }

    /// `sint32`: zigzag-encoded so small negative numbers stay short.
    public mutating func sint(_ field: Int, _ value: Int32) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))))
    }

    public mutating func bytes<C: Collection>(_ field: Int, _ value: C) where C.Element == UInt8 {
        guard !value.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func string(_ field: Int, _ value: String) { bytes(field, Array(value.utf8)) }

    /// An embedded message, written even when empty (a repeated message element must be present).
    public mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        tag(field, .lengthDelimited)
        varint(UInt64(inner.bytes.count))
        bytes.append(contentsOf: inner.bytes)
    }
}

/// The wire types of the protocol buffer encoding.
public enum ProtobufWireType: UInt8, Sendable {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case fixed32 = 5
}
