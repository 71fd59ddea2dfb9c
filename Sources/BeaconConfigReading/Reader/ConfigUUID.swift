/// A 128-bit UUID in a configuration file, with or without dashes; kept in canonical lower-case dashed form.
public struct ConfigUUID: Sendable, Hashable, ConfigScalarValue, CustomStringConvertible {
    public var bytes: [UInt8]

    public static var configTypeDescription: String { "a UUID" }

    public static func decodeConfig(_ scalar: ConfigScalar) throws(ConfigValueError) -> ConfigUUID {
        let text = scalar.text
        let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        let shapeOK = groups == [32] || groups == [8, 4, 4, 4, 12]
        guard shapeOK, !text.hasPrefix("0x"), let bytes = HexBytes.parse(text), bytes.count == 16 else {
            throw ConfigValueError(
                "`\(text)` is not a UUID (32 hex digits, e.g. "
                    + "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6)")
        }
        return ConfigUUID(bytes: bytes)
    }

    /// `2f234454-cf6d-4a0f-adf2-f4911ba9ffa6`
    public var text: String {
        let hex = String(HexBytes(bytes).description.dropFirst(2))
        let chars = Array(hex)
        var out = ""
        for (i, c) in chars.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append("-") }
            out.append(c)
        }
        return out
    }

    public var description: String { text }
}
