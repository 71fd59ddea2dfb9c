import DeviceProtocols
import Testing

/// The active-connection messages of ESPHome's API (68-88): requests decoded from bytes built by the field
/// numbers of api.proto, answers read back field by field, hostile requests refused, and the passive proxy's
/// answers to a client that asks for a connection anyway.
@Suite struct ESPHomeConnectionCodecTests {
    static let address: UInt64 = 0x00AA_0101_0001

    func fields(_ bytes: some Collection<UInt8>) throws -> [(Int, ProtobufReader.Value)] {
        var reader = ProtobufReader(Array(bytes))
        var out: [(Int, ProtobufReader.Value)] = []
        while let field = try reader.next() { out.append(field) }
        return out
    }

    func decode(_ type: UInt32, _ build: (inout ProtobufWriter) -> Void) throws -> ESPHomeClientMessage {
        var w = ProtobufWriter()
        build(&w)
        return try ESPHomeClientMessage.decode(type: type, body: w.bytes[...])
    }

    @Test func requestsDecode() throws {
        #expect(
            try decode(68) { w in
                w.uint(1, Self.address)
                w.uint(2, 5)
                w.bool(3, true)
                w.uint(4, 1)
            } == .connection(.device(address: Self.address, kind: .connectWithoutCache, addressType: 1)))
        // An older client sends no address type: the proxy must find it itself.
        #expect(
            try decode(68) { w in
                w.uint(1, Self.address)
                w.uint(2, 4)
            } == .connection(.device(address: Self.address, kind: .connectWithCache, addressType: nil)))
        #expect(
            try decode(68) { $0.uint(1, Self.address) }
                == .connection(.device(address: Self.address, kind: .connectV1, addressType: nil)))
        #expect(try decode(70) { $0.uint(1, Self.address) } == .connection(.getServices(address: Self.address)))
        #expect(
            try decode(73) { w in
                w.uint(1, Self.address)
                w.uint(2, 0x2A)
            } == .connection(.read(address: Self.address, handle: 0x2A)))
        #expect(
            try decode(75) { w in
                w.uint(1, Self.address)
                w.uint(2, 0x2C)
                w.bool(3, true)
                w.bytes(4, [0xCA, 0xFE, 0x01])
            } == .connection(.write(address: Self.address, handle: 0x2C, withResponse: true, data: [0xCA, 0xFE, 0x01])))
        #expect(
            try decode(77) { w in
                w.uint(1, Self.address)
                w.uint(2, 0x2D)
                w.bytes(3, [0x01, 0x00])
            } == .connection(.writeDescriptor(address: Self.address, handle: 0x2D, data: [0x01, 0x00])))
        #expect(
            try decode(78) { w in
                w.uint(1, Self.address)
                w.uint(2, 0x2C)
                w.bool(3, true)
            } == .connection(.notify(address: Self.address, handle: 0x2C, enable: true)))
        #expect(
            try decode(68) { w in
                w.uint(1, Self.address)
                w.uint(2, 9)
            } == .connection(.device(address: Self.address, kind: .unknown(9), addressType: nil)))
    }

    @Test func hostileRequestsAreRefusedWithTheReason() throws {
        let cases: [(UInt32, (inout ProtobufWriter) -> Void, String)] = [
            (73, { $0.uint(2, 1) }, "address 0"),
            (
                73,
                { w in
                    w.uint(1, 1 << 48)
                    w.uint(2, 1)
                }, "not a 48-bit device address"
            ),
            (73, { $0.uint(1, Self.address) }, "handle 0"),
            (
                78,
                { w in
                    w.uint(1, Self.address)
                    w.uint(2, 0x1_0000)
                }, "handle 65536"
            ),
            (
                75,
                { w in
                    w.uint(1, Self.address)
                    w.uint(2, 3)
                    w.bytes(4, [UInt8](repeating: 0, count: 513))
                },
                "513 bytes"
            ),
        ]
        for (type, build, reason) in cases {
            do {
                _ = try decode(type, build)
                Issue.record("type \(type) accepted, expected a refusal naming \(reason)")
            } catch {
                guard let failure = error as? ESPHomeProtocolError, case let .malformedMessage(text) = failure else {
                    Issue.record("type \(type): \(error)")
                    continue
                }
                #expect(text.contains(reason), "\(text)")
            }
        }
    }

    @Test func servicesAreListedWithUUIDHalvesHandlesAndProperties() throws {
        let battery = ESPHomeServiceListing(
            GATTService(uuid: .uuid16(0x180F), handle: 0x28, endHandle: 0x2B),
            characteristics: [
                .init(
                    GATTCharacteristic(
                        uuid: .uuid16(0x2A19), declarationHandle: 0x29, valueHandle: 0x2A,
                        properties: [.read, .notify], endHandle: 0x2B),
                    descriptors: [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 0x2B)])
            ])
        let custom = GATTUUID("6e4a0001-8f7b-4c8e-9d15-3b1e2c0a7f10")!
        let other = ESPHomeServiceListing(GATTService(uuid: custom, handle: 0x30, endHandle: 0x35), characteristics: [])
        let body = ESPHomeServerMessage.services(address: Self.address, [battery, other])
        let top = try fields(body)
        #expect(top.count == 3)
        #expect(top.first?.0 == 1 && top.first?.1 == .varint(Self.address))
        guard case let .bytes(service) = top[1].1, case let .bytes(second) = top[2].1 else {
            Issue.record("services are not embedded messages")
            return
        }
        var packed = ProtobufWriter()
        packed.varint(0x0000_180F_0000_1000)
        packed.varint(0x8000_0080_5F9B_34FB)
        let serviceFields = try fields(service)
        #expect(serviceFields[0].0 == 1 && serviceFields[0].1 == .bytes(packed.bytes[...]))
        #expect(serviceFields[1].0 == 2 && serviceFields[1].1 == .varint(0x28))
        guard serviceFields.count == 3, case let .bytes(characteristic) = serviceFields[2].1 else {
            Issue.record("no characteristic in \(serviceFields)")
            return
        }
        let characteristicFields = try fields(characteristic)
        #expect(characteristicFields.map(\.0) == [1, 2, 3, 4])
        #expect(characteristicFields[1].1 == .varint(0x2A))  // the value handle, which reads and writes use
        #expect(characteristicFields[2].1 == .varint(0x12))  // read | notify
        guard case let .bytes(descriptor) = characteristicFields[3].1 else {
            Issue.record("no descriptor")
            return
        }
        #expect(try fields(descriptor).last?.1 == .varint(0x2B))
        var customHalves = ProtobufWriter()
        customHalves.varint(0x6E4A_0001_8F7B_4C8E)
        customHalves.varint(0x9D15_3B1E_2C0A_7F10)
        #expect(try fields(second).first?.1 == .bytes(customHalves.bytes[...]))
    }

    @Test func answersCarryTheirFields() throws {
        let connected = try fields(
            ESPHomeServerMessage.deviceConnection(address: Self.address, connected: true, mtu: 247, error: 0))
        #expect(connected.map(\.0) == [1, 2, 3])
        #expect(connected[2].1 == .varint(247))
        // int32 error: a negative number is ten bytes, sign-extended.
        var w = ProtobufWriter()
        w.int32(3, -1)
        #expect(w.bytes == [0x18] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
        let free = try fields(ESPHomeServerMessage.connectionsFree(free: 2, limit: 3, allocated: [Self.address]))
        #expect(free.map(\.0) == [1, 2, 3])
        let data = try fields(ESPHomeServerMessage.handleData(address: Self.address, handle: 0x2A, data: [87]))
        #expect(data.last?.1 == .bytes([87][...]))
    }

    @Test func aPassiveProxyAnswersEveryConnectionRequestWithAnError() throws {
        var session = ESPHomeSession(configuration: .init(identity: ESPHomeSessionTests.identity))
        let tests = ESPHomeSessionTests()
        _ = try tests.messages(session.receive(tests.hello()))
        var connect = ProtobufWriter()
        connect.uint(1, Self.address)
        connect.uint(2, 5)
        var read = ProtobufWriter()
        read.uint(1, Self.address)
        read.uint(2, 0x2A)
        var clear = ProtobufWriter()
        clear.uint(1, Self.address)
        clear.uint(2, 6)
        let (replies, closed) = try tests.messages(
            session.receive(
                tests.frame(68, connect.bytes) + tests.frame(73, read.bytes) + tests.frame(70, read.bytes)
                    + tests.frame(68, clear.bytes)))
        #expect(closed == nil)
        #expect(replies.map(\.0) == [69, 82, 82, 88])
        let answer = try fields(replies[0].1)
        #expect(answer.contains { $0.0 == 2 } == false)  // not connected
        #expect(answer.last?.1 == .varint(UInt64(ESPHomeBluetoothError.notAvailable)))
        #expect(try fields(replies[1].1).map(\.1) == [.varint(Self.address), .varint(0x2A), .varint(0x85)])
        // A hostile request closes the API connection with the reason, as any malformed message does.
        var bad = ProtobufWriter()
        bad.uint(1, Self.address)
        let result = try tests.messages(session.receive(tests.frame(73, bad.bytes)))
        guard case let .some(.some(.malformedMessage(reason))) = result.closed else {
            Issue.record("expected a close, got \(String(describing: result.closed))")
            return
        }
        #expect(reason.contains("handle 0"))
    }
}
