import DeviceProtocols
import Testing

/// The protobuf subset and both framings of the ESPHome native API, with bytes worked out by hand from the
/// protobuf encoding rules and ESPHome's api.proto field numbers.
@Suite struct ESPHomeCodecTests {
    static let varintCases: [(UInt64, [UInt8])] = [
        (0, [0]), (1, [1]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
        (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
    ]

    @Test(arguments: varintCases)
    func varints(value: UInt64, bytes: [UInt8]) {
        var w = ProtobufWriter()
        w.varint(value)
        #expect(w.bytes == bytes)
        #expect(ProtobufWriter.varintSize(value) == bytes.count)
    }

    @Test func rawAdvertisementIsEncodedAsTheProtoSays() throws {
        let advertisement = ESPHomeRawAdvertisement(
            address: 0xA4C1_38EE_6FAB, rssi: -49, addressType: 1,
            data: [0x02, 0x01, 0x06])
        let body = ESPHomeServerMessage.rawAdvertisements([advertisement])
        // field 1 (message): [field 1 varint address][field 2 sint32 -49 -> 97][field 3 varint 1][field 4 bytes]
        var inner: [UInt8] = [0x08]
        var address = ProtobufWriter()
        address.varint(0xA4C1_38EE_6FAB)
        inner += address.bytes
        inner += [0x10, 97, 0x18, 1, 0x22, 3, 0x02, 0x01, 0x06]
        #expect(body == [0x0A, UInt8(inner.count)] + inner)

        var outer = ProtobufReader(body)
        guard let (field, value) = try outer.next(), case let .bytes(message) = value else {
            Issue.record("no embedded message")
            return
        }
        #expect(field == 1)
        var reader = ProtobufReader(message)
        var fields: [Int: ProtobufReader.Value] = [:]
        while let (number, item) = try reader.next() { fields[number] = item }
        #expect(fields[1] == .varint(0xA4C1_38EE_6FAB))
        #expect(fields[2] == .varint(97))
        #expect(fields[4] == .bytes([0x02, 0x01, 0x06][...]))
    }

    @Test func clientMessagesDecode() throws {
        var hello = ProtobufWriter()
        hello.string(1, "Home Assistant")
        hello.uint(2, 1)
        hello.uint(3, 10)
        hello.uint(99, 7)  // unknown fields are skipped
        #expect(
            try ESPHomeClientMessage.decode(type: 1, body: hello.bytes[...])
                == .hello(clientInfo: "Home Assistant", apiMajor: 1, apiMinor: 10))
        var subscribe = ProtobufWriter()
        subscribe.uint(1, 1)
        #expect(
            try ESPHomeClientMessage.decode(type: 66, body: subscribe.bytes[...]) == .subscribeAdvertisements(flags: 1))
        #expect(try ESPHomeClientMessage.decode(type: 7, body: []) == .pingRequest)
        #expect(try ESPHomeClientMessage.decode(type: 4242, body: []) == .unknown(type: 4242))
    }

    static let malformedBodies: [[UInt8]] = [
        [0x0A, 0x05, 0x41], [0x08], [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
        [0x0B, 0x00], [0x00],
    ]

    @Test(arguments: malformedBodies)
    func malformedBodiesThrow(body: [UInt8]) {
        #expect(throws: ESPHomeProtocolError.self) { try ESPHomeClientMessage.decode(type: 1, body: body[...]) }
    }

    @Test func plaintextFramesSurviveAnySplit() throws {
        var stream: [UInt8] = []
        ESPHomeFrameEncoder.plaintext(type: 1, body: Array(repeating: 0x41, count: 200), into: &stream)
        ESPHomeFrameEncoder.plaintext(type: 7, body: [], into: &stream)
        ESPHomeFrameEncoder.plaintext(type: 66, body: [0x08, 0x01], into: &stream)
        for chunk in [1, 2, 3, 7, 64, stream.count] {
            var decoder = ESPHomeFrameDecoder(framing: .plaintext)
            var frames: [ESPHomeFrameDecoder.Frame] = []
            var index = 0
            while index < stream.count {
                decoder.append(stream[index..<min(index + chunk, stream.count)])
                index += chunk
                while let frame = try decoder.next() { frames.append(frame) }
            }
            #expect(frames.map(\.type) == [1, 7, 66], "chunk \(chunk)")
            #expect(frames.map(\.body.count) == [200, 0, 2])
            #expect(decoder.bufferedCount == 0)
        }
    }

    @Test func noiseFramesSplit() throws {
        var stream: [UInt8] = []
        ESPHomeFrameEncoder.noise(payload: [], into: &stream)
        ESPHomeFrameEncoder.noise(payload: Array(repeating: 7, count: 300), into: &stream)
        var decoder = ESPHomeFrameDecoder(framing: .noise)
        var sizes: [Int] = []
        for byte in stream {
            decoder.append([byte])
            while let frame = try decoder.next() { sizes.append(frame.body.count) }
        }
        #expect(sizes == [0, 300])
    }

    @Test func badFramesThrow() {
        var wrongIndicator = ESPHomeFrameDecoder(framing: .plaintext)
        wrongIndicator.append([0x01, 0x00, 0x00])
        #expect(throws: ESPHomeProtocolError.self) { try wrongIndicator.next() }

        var oversized = ESPHomeFrameDecoder(framing: .plaintext, maxFrameSize: 1024)
        oversized.append([0x00, 0x80, 0x80, 0x04, 0x01])  // 65536 bytes announced
        #expect(throws: ESPHomeProtocolError.oversizedFrame(65536)) { try oversized.next() }

        var longVarint = ESPHomeFrameDecoder(framing: .plaintext)
        longVarint.append([0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
        #expect(throws: ESPHomeProtocolError.self) { try longVarint.next() }

        var noiseOversized = ESPHomeFrameDecoder(framing: .noise, maxFrameSize: 100)
        noiseOversized.append([0x01, 0x01, 0x00])
        #expect(throws: ESPHomeProtocolError.oversizedFrame(256)) { try noiseOversized.next() }

        var plaintextToNoise = ESPHomeFrameDecoder(framing: .noise)
        plaintextToNoise.append([0x00, 0x00, 0x01])
        #expect(throws: ESPHomeProtocolError.self) { try plaintextToNoise.next() }
    }

    @Test func encryptedMessageHeader() throws {
        let plain = ESPHomeFrameEncoder.noisePlaintext(type: 93, body: [1, 2, 3])
        #expect(plain == [0, 93, 0, 3, 1, 2, 3])
        let parsed = try ESPHomeFrameEncoder.parseNoisePlaintext(plain)
        #expect(parsed.type == 93 && Array(parsed.body) == [1, 2, 3])
        #expect(throws: ESPHomeProtocolError.self) { try ESPHomeFrameEncoder.parseNoisePlaintext([0, 93, 0, 9, 1]) }
        #expect(throws: ESPHomeProtocolError.self) { try ESPHomeFrameEncoder.parseNoisePlaintext([0, 93]) }
    }

    @Test func encryptionKeys() {
        let key = "mIlQsmOEZ4qS0N6nQ4fzvqMvr8TuvV7ok/2SE8D6T4Q="  // 32 bytes, made for this test
        #expect(ESPHomeEncryptionKey.decode(key)?.count == 32)
        #expect(ESPHomeEncryptionKey.decode(key + "\n") != nil)
        #expect(ESPHomeEncryptionKey.decode("c2hvcnQ=") == nil)  // "short"
        #expect(ESPHomeEncryptionKey.decode("not base64 at all!!") == nil)
        #expect(ESPHomeEncryptionKey.decode("") == nil)
    }

    @Test func allowListRanges() throws {
        let lan = try #require(NetworkAddressRange("192.168.1.0/24"))
        #expect(lan.contains([192, 168, 1, 77]))
        #expect(!lan.contains([192, 168, 2, 1]))
        #expect(lan.contains([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 9]))  // IPv4-mapped
        let ula = try #require(NetworkAddressRange("fd00::/8"))
        #expect(ula.contains(try #require(NetworkAddressRange.parseAddress("fd12:3456::1"))))
        #expect(!ula.contains([10, 0, 0, 1]))
        #expect(NetworkAddressRange("10.0.0.1")?.prefixLength == 32)
        #expect(NetworkAddressRange("::1")?.description == "0:0:0:0:0:0:0:1/128")
        for bad in ["10.0.0.0/33", "300.1.1.1", "1.2.3", "fe80::1::2", "10.0.0.0/", "abc", "10.0.0.0/-1"] {
            #expect(NetworkAddressRange(bad) == nil, "\(bad)")
        }
    }
}
