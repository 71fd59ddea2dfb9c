/// Bytes written as hexadecimal in a configuration file: `0x004c`, `4c00`, `de:ad:be:ef`.
public struct HexBytes: Sendable, Hashable, ConfigScalarValue, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public static var configTypeDescription: String { "hexadecimal bytes" }

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> HexBytes {
        guard let bytes = parse(scalar.text) else {
            throw ConfigValueError("`\(scalar.text)` is not hexadecimal bytes (e.g. 0x004c or de:ad:be:ef)")
        }
        return HexBytes(bytes)
    }

    /// Nil unless `text` is an even number of hex digits after removing a `0x` prefix and `:`/`-` separators.
    public static func parse(_ text: String) -> [UInt8]? {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let digits = body.filter { $0 != ":" && $0 != "-" }.unicodeScalars.map { $0 }
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    package static func nibble(_ s: Unicode.Scalar) -> UInt8? {
        switch s.value {
        case 0x30...0x39: UInt8(s.value - 0x30)
        case 0x41...0x46: UInt8(s.value - 0x41 + 10)
        case 0x61...0x66: UInt8(s.value - 0x61 + 10)
        default: nil
        }
    }

    public var description: String {
        let digits: [Character] = Array("0123456789abcdef")
        return "0x" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
