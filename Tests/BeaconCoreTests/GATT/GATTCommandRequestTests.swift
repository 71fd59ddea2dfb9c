import Testing

@testable import BeaconEvents
@testable import BeaconModel
@testable import DeviceProtocols

/// GATT commands over MQTT: every payload is untrusted. Good ones decode to what they say; every bad one is a
/// `bad_request` (or `unknown_operation`) naming the field, with the request's id when it had a usable one, and
/// the reply payloads are JSON a client can parse.
@Suite struct GATTCommandRequestTests {
    func parse(_ op: String, _ payload: String) -> Result<GATTCommandRequest, GATTCommandFailure> {
        GATTCommandRequest.parse(op: Substring(op), payload: Array(payload.utf8))
    }

    @Test func goodRequestsDecode() throws {
        let read = try parse("read", #"{"id":"r1","address":"aa:bb:cc:dd:ee:ff","uuid":"2A19"}"#).get()
        #expect(read.operation == .read && read.id == "r1" && read.uuid == .uuid16(0x2A19) && !read.random)
        #expect(read.address == BluetoothAddress(string: "AA:BB:CC:DD:EE:FF"))
        let write = try parse(
            "write",
            #"{"id":"w","address":"AA:BB:CC:DD:EE:FF","random":true,"uuid":"6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10","value":"CAFE01","response":false}"#
        ).get()
        #expect(write.value == [0xCA, 0xFE, 0x01] && !write.withResponse && write.random)
        #expect(write.uuid == GATTUUID("6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10"))
        let subscribe = try parse(
            "subscribe", #"{"id":"s","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","seconds":2.5,"count":3}"#
        ).get()
        #expect(subscribe.seconds == 2.5 && subscribe.count == 3)
        let info = try parse("info", #"{"id":"i","address":"AA:BB:CC:DD:EE:FF"}"#).get()
        #expect(info.operation == .info && info.uuid == nil)
        #expect(
            try parse("services", #"{"id":"x","address":"AA:BB:CC:DD:EE:FF","random":null}"#).get().operation
                == .services)
    }

    /// (operation, payload, the request id the failure keeps, the kind, the step).
    static let hostile: [(String, String, String?, String, String)] = [
        ("read", "", nil, "bad_request", "parse"),
        ("read", "{", nil, "bad_request", "parse"),
        ("read", "[1,2]", nil, "bad_request", "parse"),
        ("read", "\u{FF}\u{FE}", nil, "bad_request", "parse"),
        ("read", String(repeating: "[", count: 200), nil, "bad_request", "parse"),
        ("read", #"{"id":"a","id":"b"}"#, nil, "bad_request", "parse"),
        ("read", #"{"address":"AA:BB:CC:DD:EE:FF","uuid":"2a19"}"#, nil, "bad_request", "id"),
        ("read", #"{"id":7,"address":"AA:BB:CC:DD:EE:FF","uuid":"2a19"}"#, nil, "bad_request", "id"),
        ("read", #"{"id":"","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19"}"#, nil, "bad_request", "id"),
        (
            "read", "{\"id\":\"\(String(repeating: "x", count: 129))\",\"address\":\"AA:BB:CC:DD:EE:FF\"}", nil,
            "bad_request", "id"
        ),
        ("frobnicate", #"{"id":"u","address":"AA:BB:CC:DD:EE:FF"}"#, "u", "unknown_operation", "topic"),
        ("", #"{"id":"u"}"#, "u", "unknown_operation", "topic"),
        ("read", #"{"id":"k","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","colour":"red"}"#, "k", "bad_request", "id"),
        ("read", #"{"id":"a1","uuid":"2a19"}"#, "a1", "bad_request", "address"),
        ("read", #"{"id":"a2","address":"AA:BB:CC:DD:EE","uuid":"2a19"}"#, "a2", "bad_request", "address"),
        ("read", #"{"id":"a3","address":"GG:BB:CC:DD:EE:FF","uuid":"2a19"}"#, "a3", "bad_request", "address"),
        ("read", #"{"id":"a4","address":12,"uuid":"2a19"}"#, "a4", "bad_request", "address"),
        (
            "read", #"{"id":"r","address":"AA:BB:CC:DD:EE:FF","random":"yes","uuid":"2a19"}"#, "r", "bad_request",
            "random"
        ),
        ("read", #"{"id":"u1","address":"AA:BB:CC:DD:EE:FF"}"#, "u1", "bad_request", "uuid"),
        ("read", #"{"id":"u2","address":"AA:BB:CC:DD:EE:FF","uuid":"2a1"}"#, "u2", "bad_request", "uuid"),
        ("read", #"{"id":"u3","address":"AA:BB:CC:DD:EE:FF","uuid":"zz19"}"#, "u3", "bad_request", "uuid"),
        ("read", #"{"id":"u4","address":"AA:BB:CC:DD:EE:FF","uuid":6681}"#, "u4", "bad_request", "uuid"),
        ("info", #"{"id":"u5","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19"}"#, "u5", "bad_request", "uuid"),
        ("write", #"{"id":"v1","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19"}"#, "v1", "bad_request", "value"),
        (
            "write", #"{"id":"v2","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":"abc"}"#, "v2", "bad_request",
            "value"
        ),
        (
            "write", #"{"id":"v3","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":"zz"}"#, "v3", "bad_request",
            "value"
        ),
        (
            "write", #"{"id":"v4","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":[1]}"#, "v4", "bad_request",
            "value"
        ),
        (
            "write",
            "{\"id\":\"v5\",\"address\":\"AA:BB:CC:DD:EE:FF\",\"uuid\":\"2a19\",\"value\":\"\(String(repeating: "00", count: 513))\"}",
            "v5", "bad_request", "value"
        ),
        (
            "read", #"{"id":"v6","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":"00"}"#, "v6", "bad_request",
            "value"
        ),
        (
            "subscribe", #"{"id":"t1","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","seconds":0}"#, "t1", "bad_request",
            "seconds"
        ),
        (
            "subscribe", #"{"id":"t2","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","seconds":31}"#, "t2", "bad_request",
            "seconds"
        ),
        (
            "read", #"{"id":"t3","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","seconds":5}"#, "t3", "bad_request",
            "seconds"
        ),
        (
            "subscribe", #"{"id":"t4","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","count":1.5}"#, "t4", "bad_request",
            "count"
        ),
        (
            "subscribe", #"{"id":"t5","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","count":1000}"#, "t5", "bad_request",
            "count"
        ),
        (
            "write", #"{"id":"w1","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":"00","response":1}"#, "w1",
            "bad_request", "response"
        ),
    ]

    @Test(arguments: hostile)
    func hostileRequestsAreRefusedWithTheirField(_ item: (String, String, String?, String, String)) {
        let (op, payload, id, kind, step) = item
        guard case .failure(let failure) = parse(op, payload) else {
            Issue.record("accepted: \(payload.prefix(80))")
            return
        }
        #expect(failure.id == id)
        #expect(failure.error.kind == kind && failure.error.step == step, "\(failure.error)")
        #expect(!failure.error.message.isEmpty)
        // The reply is JSON with the id (or null), ok false and the error.
        let reply = try? JSONValue(parsing: GATTCommandReply.failure(id: failure.id, failure.error))
        #expect(reply?["id"] == (id.map(JSONValue.string) ?? .null))
        #expect(reply?["ok"] == .bool(false))
        #expect(reply?["error"]?["kind"] == .string(kind))
    }

    @Test func oversizedPayloadIsRefusedBeforeParsing() {
        let big = "{\"id\":\"big\",\"address\":\"" + String(repeating: "A", count: 5000) + "\"}"
        guard case .failure(let failure) = parse("read", big) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.error.kind == "bad_request" && failure.error.message.contains("at most 4096"))
    }

    /// Random bytes and mutations of a good payload never trap and never decode to something malformed.
    @Test func randomPayloadsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let good = Array(#"{"id":"r1","address":"AA:BB:CC:DD:EE:FF","uuid":"2a19","value":"00"}"#.utf8)
        for round in 0..<5000 {
            var bytes = good
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            let op = GATTCommandRequest.Operation.allCases.randomElement(using: &generator)!.rawValue
            if case .success(let command) = GATTCommandRequest.parse(op: Substring(op), payload: bytes) {
                #expect(!command.id.isEmpty && command.id.count <= GATTCommandRequest.maxIDLength)
            }
        }
    }

    @Test func successReplyCarriesTheIdAndTheResult() throws {
        let address = try #require(BluetoothAddress(string: "AA:BB:CC:DD:EE:FF"))
        let text = GATTCommandReply.success(
            id: "q\"uote", op: .read, address: address, [("uuid", .string("2a19")), ("value", .string("57"))])
        let reply = try JSONValue(parsing: text)
        #expect(reply["id"] == .string("q\"uote") && reply["ok"] == .bool(true) && reply["op"] == .string("read"))
        #expect(reply["address"] == .string("AA:BB:CC:DD:EE:FF") && reply["value"] == .string("57"))
        #expect(GATTCommandReply.level(for: "read") == "read" && GATTCommandReply.level(for: "x/#") == "invalid")
    }

    @Test func topicsArePerGatewayAndOperation() {
        let layout = TopicLayout(settings: TopicSettings(), gatewayID: "hall")
        #expect(layout.gattCommandBase == "beaconbridge/hall/command/gatt")
        #expect(layout.gattReply("read") == "beaconbridge/hall/reply/gatt/read")
        #expect(layout.deviceInfo("tag-1") == "beaconbridge/hall/device/tag-1/info")
        #expect(
            GATTCommandRequest.operation(
                inTopic: "beaconbridge/hall/command/gatt/read", commandBase: layout.gattCommandBase) == "read")
        #expect(
            GATTCommandRequest.operation(
                inTopic: "beaconbridge/other/command/gatt/read", commandBase: layout.gattCommandBase) == nil)
    }
}
