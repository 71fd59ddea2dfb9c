/// Standard base64 (RFC 4648 section 4, `+` and `/`, `=` padding required to a multiple of 4 characters),
/// decoding only: what Home Assistant and macOS's Keychain write keys in.
enum Base64Text {
    /// The bytes, or nil for anything that is not canonical padded base64.
    package static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            var quad: [UInt32] = []
            var padding = 0
            for offset in 0..<4 {
                let character = characters[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only at the end of the text, in the last two places.
                    guard index + 4 == characters.count, offset >= 2 else { return nil }
                    padding += 1
                    quad.append(0)
                    continue
                }
                guard padding == 0, let value = sextet(character) else { return nil }
                quad.append(value)
            }
            let group = quad[0] << 18 | quad[1] << 12 | quad[2] << 6 | quad[3]
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return out
    }

    private static func sextet(_ character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
