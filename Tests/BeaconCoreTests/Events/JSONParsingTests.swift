import Testing

@testable import BeaconModel

@Suite struct JSONParsingTests {
    @Test func roundTripsWhatTheSerializerWrites() throws {
        let value: JSONValue = .object([
            ("s", .string("q\"\\\n\u{01}é😀")), ("a", .array([.int(-3), .double(1.5), .bool(false), .null])),
            ("o", .object([("k", .double(1e-7))])),
        ])
        #expect(try JSONValue(parsing: value.serialized) == value)
    }

    @Test func decodesEscapesAndSurrogates() throws {
        #expect(try JSONValue(parsing: #" "\u00e9\ud83d\ude00\/" "#) == .string("é😀/"))
        #expect(try JSONValue(parsing: "123456789012345678901234") == .double(Double("123456789012345678901234")!))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "tru", "[1] x", "\"a\u{01}\""])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
    }
}
