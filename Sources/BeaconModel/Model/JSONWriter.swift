/// Compact JSON written straight into one reusable UTF-8 byte buffer: byte for byte what
/// `JSONValue.serialized` produces for the same members in the same order, without building a `JSONValue`
/// tree or appending to a `String`. The event encoder keeps one and resets it per payload.
///
/// Commas are placed by the writer: each `key(_:)` inside an object and each `element()` inside an array
/// puts one before every member but the first.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// A value was written at the current nesting level (the next member needs a comma).
    private var needsComma = false

    public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    /// Empties the buffer, keeping its storage.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// The buffer as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Starts an object member: the comma when needed, the quoted key and the colon.
    public mutating func key(named name: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// `key(named:)` for the payloads' fixed member names, copied without the escape check: a literal key must
    /// be plain ASCII without quotes, backslashes or control characters (every name in EventPayload is; checked in debug).
    public mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { text in
            assert(!text.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 })
            bytes.append(contentsOf: text)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Starts an array element: the comma when needed.
    public mutating func element() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    public mutating func null() { literal("null") }

    public mutating func bool(_ value: Bool) { literal(value ? "true" : "false") }

    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        needsComma = true
    }

    public mutating func int(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude)
        needsComma = true
    }

    /// As `JSONValue.double`: null when not finite, an integer when integral (below 1e15), else Swift's
    /// shortest round-trip form.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 1e15 { return int(Int64(value)) }
        if !appendShortDecimal(value) { bytes.append(contentsOf: value.description.utf8) }
        needsComma = true
    }

    /// Powers of ten that are exact doubles, for `appendShortDecimal`.
    private static let powersOfTen: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// Writes `value` with the fewest fraction digits (at most 9) that read back as `value`, which is the text
    /// `description` gives, without building a `String` (rounded readings, distances and capture times are most
    /// of what events carry). False, having written nothing, when there is no such form: then `description`
    /// decides (more digits, or the exponent form Swift uses below 1e-4 and from 1e16 on).
    ///
    /// Why it is the same text: for `m` and `10^k` below 2^53 both are exact doubles and one IEEE division rounds
    /// the exact quotient correctly, so `Double(m) / 10^k == value` says the decimal `m / 10^k` parses back to
    /// `value`. The first `k` that works is the shortest such decimal (any decimal with fewer fraction digits that
    /// read back would be the nearest one, `rounded()`, and would have been found), it has no trailing zero, and
    /// `rounded()` picks the nearest of equally short ones, as Swift's shortest round-trip printing does.
    private mutating func appendShortDecimal(_ value: Double) -> Bool {
        let magnitude = abs(value)
        guard magnitude >= 1e-4, magnitude < 1e15 else { return false }
        for k in 1..<Self.powersOfTen.count {
            let power = Self.powersOfTen[k]
            let scaled = (magnitude * power).rounded()
            guard scaled < 9_007_199_254_740_992 else { return false }  // 2^53
            guard scaled / power == magnitude else { continue }
            let digits = UInt64(scaled)
            let unit = UInt64(power)
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            appendDigits(digits / unit)
            bytes.append(UInt8(ascii: "."))
            appendDigits(digits % unit, width: k)
            return true
        }
        return false
    }

    /// The decimal digits of `value`, most significant first, padded with leading zeros to `width` (at most 20),
    /// written back to front into a small stack buffer and appended in one go.
    private mutating func appendDigits(_ value: UInt64, width: Int = 1) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            var rest = value
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0 && position > 0
            while 20 - position < width, position > 0 {
                position -= 1
                digits[position] = UInt8(ascii: "0")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position...]))
        }
    }

    /// A quoted string with JSON escapes (as `JSONValue.string`).
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Fast path: most strings (ids, topics, names) need no escaping and are copied whole.
        let copied = value.utf8.withContiguousStorageIfAvailable { storage -> Bool in
            guard !storage.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            bytes.append(contentsOf: storage)
            return true
        }
        if copied != true {
            for byte in value.utf8 { appendEscaped(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
        case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case ..<0x20:
            let digits = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [
                0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                digits[Int(byte >> 4)], digits[Int(byte & 0x0F)],
            ])
        default: bytes.append(byte)
        }
    }

    /// Any `JSONValue` (for the parts of a payload that come as one, e.g. a beacon's fields).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case let .bool(flag): bool(flag)
        case let .int(number): int(number)
        case let .double(number): double(number)
        case let .string(text): string(text)
        case let .array(values):
            beginArray()
            for value in values {
                element()
                self.value(value)
            }
            endArray()
        case let .object(members):
            beginObject()
            for (name, value) in members {
                key(named: name)
                self.value(value)
            }
            endObject()
        }
    }
}
