import Testing

@testable import BeaconModel

@Suite struct JSONValueTests {
    @Test func serializesNestedValuesInKeyOrder() {
        let value: JSONValue = .object([
            ("b", .int(-3)), ("a", .array([.bool(true), .null, .double(1.5), .double(2)])),
            ("s", .string("q\"\\\n\u{01}é")),
        ])
        #expect(value.serialized == #"{"b":-3,"a":[true,null,1.5,2],"s":"q\"\\\n\u0001é"}"#)
    }

    @Test func nonFiniteDoublesBecomeNull() {
        #expect(JSONValue.array([.double(.nan), .double(.infinity)]).serialized == "[null,null]")
    }

    @Test func subscriptFindsMembers() {
        let value: JSONValue = .object([("id", .string("x"))])
        #expect(value["id"] == .string("x"))
        #expect(value["missing"] == nil)
        #expect(JSONValue.int(1)["id"] == nil)
    }
}
