/// A small strict JSON parser (RFC 8259) into `JSONValue`, for scenario files. Errors name the line and column.
/// Integers that fit Int64 become `.int`, other numbers `.double`. Nesting is limited to 64 levels.
public struct ScenarioJSONReader {
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String
        public var description: String { "line \(line), column \(column): \(message)" }
    }

    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0

    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var reader = ScenarioJSONReader(bytes: Array(text.utf8))
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        guard reader.position == reader.bytes.count else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ message: String) -> SyntaxError {
        var line = 1, column = 1
        for byte in bytes[0..<min(position, bytes.count)] {
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return SyntaxError(line: line, column: column, message: message)
    }

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func value() throws(SyntaxError) -> JSONValue {
        guard let byte = peek else { throw error("unexpected end of input, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        let start = position
        for expected in word.utf8 {
            guard peek == expected else {
                position = start
                throw error("invalid literal, expected '\(word)'")
            }
            position += 1
        }
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        if depth > 64 { throw error("nesting deeper than 64 levels") }
    }

    private mutating func object() throws(SyntaxError) -> JSONValue {
        try enter()
        position += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if peek == UInt8(ascii: "}") { position += 1; depth -= 1; return .object(members) }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
            let key = try string()
            if members.contains(where: { $0.0 == key }) { throw error("duplicate key '\(key)'") }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after key '\(key)'") }
            position += 1
            skipSpace()
            members.append((key, try value()))
            skipSpace()
            if peek == UInt8(ascii: ",") { position += 1; continue }
            if peek == UInt8(ascii: "}") { position += 1; depth -= 1; return .object(members) }
            throw error("expected ',' or '}' in object")
        }
    }

    private mutating func array() throws(SyntaxError) -> JSONValue {
        try enter()
        position += 1
        var values: [JSONValue] = []
        skipSpace()
        if peek == UInt8(ascii: "]") { position += 1; depth -= 1; return .array(values) }
        while true {
            skipSpace()
            values.append(try value())
            skipSpace()
            if peek == UInt8(ascii: ",") { position += 1; continue }
            if peek == UInt8(ascii: "]") { position += 1; depth -= 1; return .array(values) }
            throw error("expected ',' or ']' in array")
        }
    }

    private mutating func string() throws(SyntaxError) -> String {
        position += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() { scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars); run.removeAll() }
        while true {
            guard let byte = peek else { throw error("unterminated string") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard let escape = peek else { throw error("unterminated escape") }
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), peek == UInt8(ascii: "\\") {
                        position += 1
                        guard peek == UInt8(ascii: "u") else { throw error("expected a low surrogate") }
                        position += 1
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(scalar)
                default: throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            case 0..<0x20:
                throw error("control character in string")
            default:
                run.append(byte)
            }
        }
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = UInt32(String(Unicode.Scalar(byte)), radix: 16) else {
                throw error("expected 4 hex digits after \\u")
            }
            code = code << 4 | digit
            position += 1
        }
        return code
    }

    private mutating func number() throws(SyntaxError) -> JSONValue {
        let start = position
        var isInteger = true
        if peek == UInt8(ascii: "-") { position += 1 }
        guard let first = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("expected a digit")
        }
        if first == UInt8(ascii: "0") { position += 1 } else { skipDigits() }
        if peek == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard try digitFollows() else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard try digitFollows() else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw error("number out of range: \(text)") }
        return .double(value)
    }

    private func digitFollows() throws(SyntaxError) -> Bool {
        guard let byte = peek else { return false }
        return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private mutating func skipDigits() {
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
    }
}
