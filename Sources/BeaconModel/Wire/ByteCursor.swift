/// A bounds-checked reader over a byte array. Every read checks the remaining length first and throws a
/// `DecodeError` carrying the offset of the read that failed; nothing here can trap on any input.
///
/// Offsets are absolute indices into `bytes`, so errors point at the byte in the caller's input.
///
/// Its reads are `@inlinable` (with the stored offsets `@usableFromInline`), so the decoders in other modules
/// (BeaconFormats' HCI event parser reads every report's fields through one) compile them inline instead of
/// calling into BeaconModel per byte; the error path stays out of line (`truncated`).
public struct ByteCursor: Sendable {
    public let bytes: [UInt8]
    @usableFromInline var storedOffset: Int
    @usableFromInline var storedEnd: Int
    /// Index of the next byte to read.
    @inlinable public var offset: Int { storedOffset }
    /// One past the last readable index (may be less than `bytes.count` to read a sub-range).
    @inlinable public var end: Int { storedEnd }

    /// Reads `bytes[range]` (clamped to the array).
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let whole = 0..<bytes.count
        let clamped = (range ?? whole).clamped(to: whole)
        self.storedOffset = clamped.lowerBound
        self.storedEnd = clamped.upperBound
    }

    @inlinable public var remaining: Int { storedEnd - storedOffset }
    @inlinable public var isAtEnd: Bool { storedOffset >= storedEnd }

    @inlinable @inline(__always)
    func require(_ count: Int, _ what: StaticString) throws(DecodeError) {
        guard count >= 0, storedEnd - storedOffset >= count else { throw truncated(count, what) }
    }

    @usableFromInline @inline(never)
    func truncated(_ count: Int, _ what: StaticString) -> DecodeError {
        DecodeError(
            offset: storedOffset,
            reason: "truncated \(what): need \(count) byte(s), \(max(0, storedEnd - storedOffset)) left")
    }

    @inlinable @inline(__always)
    public mutating func readUInt8(_ what: StaticString = "byte") throws(DecodeError) -> UInt8 {
        try require(1, what)
        defer { storedOffset += 1 }
        return bytes[storedOffset]
    }

    @inlinable @inline(__always)
    public mutating func readInt8(_ what: StaticString = "byte") throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8(what))
    }

    @inlinable @inline(__always)
    public mutating func readUInt16LE(_ what: StaticString = "16-bit value") throws(DecodeError) -> UInt16 {
        try require(2, what)
        defer { storedOffset += 2 }
        return UInt16(bytes[storedOffset]) | UInt16(bytes[storedOffset + 1]) << 8
    }

    @inlinable @inline(__always)
    public mutating func readUInt16BE(_ what: StaticString = "16-bit value") throws(DecodeError) -> UInt16 {
        try require(2, what)
        defer { storedOffset += 2 }
        return UInt16(bytes[storedOffset]) << 8 | UInt16(bytes[storedOffset + 1])
    }

    @inlinable
    public mutating func readUInt32BE(_ what: StaticString = "32-bit value") throws(DecodeError) -> UInt32 {
        try require(4, what)
        var value: UInt32 = 0
        for index in storedOffset..<(storedOffset + 4) { value = value << 8 | UInt32(bytes[index]) }
        storedOffset += 4
        return value
    }

    @inlinable
    public mutating func readUInt32LE(_ what: StaticString = "32-bit value") throws(DecodeError) -> UInt32 {
        try require(4, what)
        var value: UInt32 = 0
        for index in stride(from: storedOffset + 3, through: storedOffset, by: -1) {
            value = value << 8 | UInt32(bytes[index])
        }
        storedOffset += 4
        return value
    }

    @inlinable
    public mutating func readUInt64BE(_ what: StaticString = "64-bit value") throws(DecodeError) -> UInt64 {
        try require(8, what)
        var value: UInt64 = 0
        for index in storedOffset..<(storedOffset + 8) { value = value << 8 | UInt64(bytes[index]) }
        storedOffset += 8
        return value
    }

    /// The index range of the next `count` bytes, consumed without copying.
    @inlinable @inline(__always)
    public mutating func readRange(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) -> Range<Int> {
        try require(count, what)
        defer { storedOffset += count }
        return storedOffset..<(storedOffset + count)
    }

    /// Copies the next `count` bytes.
    @inlinable
    public mutating func readBytes(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) -> [UInt8] {
        let range = try readRange(count, what)
        guard count > 0 else { return [] }
        // `readRange` checked `range` against `end <= bytes.count`: a plain memory copy is in bounds.
        return bytes.withUnsafeBufferPointer { source in
            Array(UnsafeBufferPointer(rebasing: source[range]))
        }
    }

    @inlinable
    public mutating func skip(_ count: Int, _ what: StaticString = "bytes") throws(DecodeError) {
        try require(count, what)
        storedOffset += count
    }

    /// Restricts further reads to the next `count` bytes (e.g. an event's declared parameter length).
    @inlinable
    public mutating func limit(to count: Int, _ what: StaticString = "declared length") throws(DecodeError) {
        try require(count, what)
        storedEnd = storedOffset + count
    }
}
