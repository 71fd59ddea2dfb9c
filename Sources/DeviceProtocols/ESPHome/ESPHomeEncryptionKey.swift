/// The API encryption key as ESPHome writes it (`api: encryption: key:`): 32 bytes in standard base64.
public enum ESPHomeEncryptionKey {
    /// The 32 key bytes, or nil when `text` (surrounding whitespace ignored) is not base64 of exactly 32 bytes.
    public static func decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, symbol) in alphabet.enumerated() { values[Int(symbol)] = UInt8(index) }
        var symbols = Array(text.utf8).filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard symbols.count % 4 == 0, !symbols.isEmpty else { return nil }
        var padding = 0
        while symbols.last == UInt8(ascii: "="), padding < 2 {
            symbols.removeLast()
            padding += 1
        }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            let value = values[Int(symbol)]
            guard value != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out.count == 32 ? out : nil
    }
}
