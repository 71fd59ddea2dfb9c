import BeaconModel

/// Hex text from the command line to bytes. Spaces, ':' and '-' separators and a leading "0x" are allowed.
enum DecodeHex {
    struct Problem: Error {
        var reason: String
        /// Character offset in the argument.
        var offset: Int
        var json: JSONValue {
            .object([
                ("error", .string(reason)), ("offset", .int(Int64(offset))), ("offset_unit", .string("character")),
            ])
        }
    }

    static func bytes(_ text: String) -> Result<[UInt8], Problem> {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var pending: UInt8?
        var pendingOffset = 0
        let characters = Array(text.utf8)
        var start = 0
        if characters.count >= 2, characters[0] == UInt8(ascii: "0"), characters[1] | 0x20 == UInt8(ascii: "x") {
            start = 2
        }
        for offset in start..<characters.count {
            let character = characters[offset]
            if character == 0x20 || character == UInt8(ascii: ":") || character == UInt8(ascii: "-")
                || character == 0x09
            {
                if pending != nil {
                    return .failure(Problem(reason: "odd hex digit before a separator", offset: pendingOffset))
                }
                continue
            }
            guard let value = digit(character) else {
                return .failure(Problem(reason: "not a hex digit", offset: offset))
            }
            if let high = pending {
                out.append(high << 4 | value)
                pending = nil
            } else {
                pending = value
                pendingOffset = offset
            }
        }
        if pending != nil { return .failure(Problem(reason: "odd number of hex digits", offset: pendingOffset)) }
        if out.isEmpty { return .failure(Problem(reason: "no bytes", offset: 0)) }
        return .success(out)
    }

    private static func digit(_ character: UInt8) -> UInt8? {
        switch character {
        case 0x30...0x39: character - 0x30
        case 0x41...0x46: character - 0x41 + 10
        case 0x61...0x66: character - 0x61 + 10
        default: nil
        }
    }
}
