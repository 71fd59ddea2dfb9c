/// A bounds-checked reader over a byte array. Every read checks the remaining length first and throws a
/// `DecodeError` carrying the offset of the read that failed; nothing here can trap on any input.
///
/// Offsets are absolute indices into `bytes`, so errors point at the byte in the caller's input.
public struct ByteCursor: Sendable {
    public let bytes: [UInt8]
    /// Index of the next byte to read.
    public private(set) var offset: Int
    /// One past the last readable index (may be less than `bytes.count` to read a sub-range).
    public private(set) var end: Int

    /// Reads `bytes[range]` (clamped to the array).
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let whole = 0..<bytes.count
        let clamped = (range ?? whole).clamped(to: whole)
        self.offset = clamped.lowerBound
        self.end = clamped.upperBound
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    @inline(__always)
    private func require(_ count: Int, _ what: StaticString) throws(DecodeError) {
        guard count >= 0, end - offset >= count else {
            throw DecodeError(
                offset: offset, reason: "truncated \(what): need \(count) byte(s), \(max(0, end - offset)) left")
        }
    }

    @inline(__always)
    public mutating func readUInt8(_ what: StaticString = "byte") throws(DecodeError) -> UInt8 {
        try require(1, what)
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    public mutating func readInt8(_ what: StaticString = "byte") throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8(what))
    }

    @inline(__always)
    public mutating func readUInt16LE(_ what: StaticString = "16-bit value") throws(DecodeError) -> UInt16 {
        try require(2, what)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    @inline(__always)
    public mutating func readUInt16BE(_ what: StaticString = "16-bit value") throws(DecodeError) -> UInt16 {
        try require(2, what)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt32BE(_ what: StaticString = "32-bit value") throws(DecodeError) -> UInt32 {
        try require(4, what)
        var value: UInt32 = 0
        for index in offset..<(offset + 4) { value = value << 8 | UInt32(bytes[index]) }
        offset += 4
        return value
    }

    public mutating func readUInt32LE(_ what: StaticString = "32-bit value") throws(DecodeError) -> UInt32 {
        try require(4, what)
        var value: UInt32 = 0
        for index in stride(from: offset + 3, through: offset, by: -1) { value = value << 8 | UInt32(bytes[index]) }
        offset += 4
        return value
    }

    public mutating func readUInt64BE(_ what: StaticString = "64-bit value") throws(DecodeError) -> UInt64 {
        try require(8, what)
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
        offset += 8
        return value
    }

    /// The index range of the next `count` bytes, consumed without copying.
    @inline(__always)
    public mutating func readRange(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) -> Range<Int> {
        try require(count, what)
        defer { offset += count }
        return offset..<(offset + count)
    }

    /// Copies the next `count` bytes.
    public mutating func readBytes(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) -> [UInt8] {
        let range = try readRange(count, what)
        guard count > 0 else { return [] }
        // `readRange` checked `range` against `end <= bytes.count`: a plain memory copy is in bounds.
        return bytes.withUnsafeBufferPointer { source in
            Array(UnsafeBufferPointer(rebasing: source[range]))
        }
    }

    public mutating func skip(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) {
        try require(count, what)
        offset += count
    }

    /// Restricts further reads to the next `count` bytes (e.g. an event's declared parameter length).
    public mutating func limit(to count: Int, _ what: StaticString = "declared length") throws(DecodeError) {
        try require(count, what)
        end = offset + count
    }
}
