import DeviceProtocols
import ESPHomeProxy
import Testing

/// The connection state machine: message order, passwords, subscriptions, and the Noise handshake against
/// an initiator written from the Noise specification (the pinned aioesphomeapi checks the real client in
/// scripts/esphome-stage.sh).
@Suite struct ESPHomeSessionTests {
    static let identity = ESPHomeDeviceIdentity(
        name: "hall-pi", friendlyName: "Hall", macAddress: "02:11:22:33:44:55",
        bluetoothMACAddress: "02:11:22:33:44:55", version: "0.1.0",
        usesPassword: false)
    static let psk = Array(UInt8(1)...UInt8(32))
    static let advertisement = ESPHomeRawAdvertisement(
        address: 0x0011_2233_4455, rssi: -60, addressType: 0, data: [2, 1, 6])

    /// The messages (type, body) in plaintext frames of `actions`, and whether the session asked to close.
    func messages(_ actions: [ESPHomeSession.Action]) throws -> (
        messages: [(UInt32, [UInt8])], closed: ESPHomeProtocolError??
    ) {
        var decoder = ESPHomeFrameDecoder(framing: .plaintext)
        var closed: ESPHomeProtocolError?? = nil
        for action in actions {
            switch action {
            case let .send(bytes): decoder.append(bytes)
            case let .close(reason): closed = .some(reason)
            case .bluetooth, .connectionsFree: break
            }
        }
        var out: [(UInt32, [UInt8])] = []
        while let frame = try decoder.next() { out.append((frame.type, frame.body)) }
        return (out, closed)
    }

    func frame(_ type: UInt32, _ body: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = []
        ESPHomeFrameEncoder.plaintext(type: type, body: body, into: &out)
        return out
    }

    func hello() -> [UInt8] {
        var w = ProtobufWriter()
        w.string(1, "test client")
        return frame(1, w.bytes)
    }

    func connect(_ password: String) -> [UInt8] {
        var w = ProtobufWriter()
        w.string(1, password)
        return frame(3, w.bytes)
    }

    @Test func helloDeviceInfoSubscribeAndAdvertisements() throws {
        var session = ESPHomeSession(configuration: .init(identity: Self.identity))
        #expect(session.frames(for: [Self.advertisement]).isEmpty)
        let (replies, closed) = try messages(session.receive(hello() + connect("") + frame(9) + frame(11) + frame(7)))
        #expect(closed == nil)
        #expect(replies.map(\.0) == [2, 4, 10, 19, 8])
        var info: [Int: ProtobufReader.Value] = [:]
        var reader = ProtobufReader(replies[2].1)
        while let (field, value) = try reader.next() { info[field] = value }
        #expect(info[2]?.text == "hall-pi")
        #expect(info[3]?.text == "02:11:22:33:44:55")
        #expect(info[18]?.text == "02:11:22:33:44:55")
        #expect(info[15] == .varint(33))  // passive scan (1) | raw advertisements (32)
        #expect(session.frames(for: [Self.advertisement]).isEmpty)

        var subscribe = ProtobufWriter()
        subscribe.uint(1, 1)
        #expect(try messages(session.receive(frame(66, subscribe.bytes))).messages.isEmpty)
        #expect(session.isSubscribed)
        let batch = Array(repeating: Self.advertisement, count: 40)
        var decoder = ESPHomeFrameDecoder(framing: .plaintext)
        decoder.append(session.frames(for: batch))
        var count = 0
        while let frame = try decoder.next() {
            #expect(frame.type == 93)
            var outer = ProtobufReader(frame.body)
            while try outer.next() != nil { count += 1 }
        }
        #expect(count == 40)
        _ = session.receive(frame(87))
        #expect(!session.isSubscribed)
    }

    @Test func messagesBeforeHelloCloseTheConnection() throws {
        var session = ESPHomeSession(configuration: .init(identity: Self.identity))
        let (replies, closed) = try messages(session.receive(frame(66, [0x08, 0x01])))
        #expect(replies.isEmpty)
        #expect(closed == .some(.outOfOrder("message type 66 before Hello")))
        #expect(session.isClosed)
        #expect(session.receive(hello()).isEmpty)
    }

    @Test func passwordIsChecked() throws {
        let configuration = ESPHomeSession.Configuration(identity: Self.identity, password: "s3cret")
        var wrong = ESPHomeSession(configuration: configuration)
        let (replies, closed) = try messages(wrong.receive(hello() + connect("guess")))
        #expect(replies.map(\.0) == [2, 4])
        #expect(replies[1].1 == [0x08, 0x01])  // invalid_password = true
        #expect(closed != nil)

        var early = ESPHomeSession(configuration: configuration)
        let (_, closedEarly) = try messages(early.receive(hello() + frame(66, [0x08, 0x01])))
        #expect(closedEarly == .some(.outOfOrder("message type 66 before Connect")))

        var right = ESPHomeSession(configuration: configuration)
        let (ok, none) = try messages(right.receive(hello() + connect("s3cret") + frame(66, [0x08, 0x01])))
        #expect(none == nil)
        #expect(ok.map(\.0) == [2, 4])
        #expect(ok[1].1.isEmpty)  // invalid_password = false
        #expect(right.isSubscribed)
    }

    @Test func disconnectAndMalformedFrames() throws {
        var session = ESPHomeSession(configuration: .init(identity: Self.identity))
        let (replies, closed) = try messages(session.receive(hello() + frame(5)))
        #expect(replies.map(\.0) == [2, 6])
        #expect(closed == .some(nil))

        var garbage = ESPHomeSession(configuration: .init(identity: Self.identity))
        let result = try messages(garbage.receive([0x05, 0x01, 0x02]))
        guard case let .some(.some(reason)) = result.closed, case .malformedFrame = reason else {
            Issue.record("expected a malformed-frame close, got \(String(describing: result.closed))")
            return
        }
        var huge = ESPHomeSession(configuration: .init(identity: Self.identity, maxFrameSize: 1024))
        #expect(try messages(huge.receive([0x00, 0xFF, 0xFF, 0x03])).closed == .some(.oversizedFrame(0xFFFF)))
        var badBody = ESPHomeSession(configuration: .init(identity: Self.identity))
        #expect(
            try messages(badBody.receive(frame(1, [0x0A, 0x40]))).closed
                == .some(.malformedMessage("field 1 is longer than the message")))
    }

    /// Client side of the ESPHome Noise framing, for the tests.
    struct NoiseClient {
        var handshake: NoiseHandshake
        var send: NoiseCipherState?
        var receive: NoiseCipherState?
        init(psk: [UInt8]) { handshake = NoiseHandshake(psk: psk, crypto: OpenSSLNoiseCrypto()) }

        mutating func opening() throws -> [UInt8] {
            var out: [UInt8] = []
            ESPHomeFrameEncoder.noise(payload: [], into: &out)
            ESPHomeFrameEncoder.noise(payload: [0x00] + (try handshake.initiate()), into: &out)
            return out
        }

        mutating func message(_ type: UInt32, _ body: [UInt8]) throws -> [UInt8] {
            var out: [UInt8] = []
            ESPHomeFrameEncoder.noise(
                payload: try send!.encrypt(ESPHomeFrameEncoder.noisePlaintext(type: type, body: body)), into: &out)
            return out
        }
    }

    func noiseFrames(_ actions: [ESPHomeSession.Action]) throws -> [[UInt8]] {
        var decoder = ESPHomeFrameDecoder(framing: .noise)
        for case let .send(bytes) in actions { decoder.append(bytes) }
        var out: [[UInt8]] = []
        while let frame = try decoder.next() { out.append(frame.body) }
        return out
    }

    @Test func noiseHandshakeAndEncryptedMessages() throws {
        var server = ESPHomeSession(
            configuration: .init(identity: Self.identity, psk: Self.psk), crypto: OpenSSLNoiseCrypto())
        var client = NoiseClient(psk: Self.psk)
        let frames = try noiseFrames(server.receive(try client.opening()))
        #expect(frames.count == 2)
        #expect(frames[0] == [0x01] + Array("hall-pi".utf8) + [0] + Array("02:11:22:33:44:55".utf8) + [0])
        #expect(frames[1].first == 0x00 && frames[1].count == 49)
        (client.send, client.receive) = try client.handshake.finish(reply: Array(frames[1].dropFirst()))

        var w = ProtobufWriter()
        w.string(1, "noise client")
        let replies = try noiseFrames(server.receive(try client.message(1, w.bytes) + client.message(9, [])))
        #expect(replies.count == 2)
        let hello = try ESPHomeFrameEncoder.parseNoisePlaintext(try client.receive!.decrypt(replies[0]))
        let info = try ESPHomeFrameEncoder.parseNoisePlaintext(try client.receive!.decrypt(replies[1]))
        #expect(hello.type == 2 && info.type == 10)

        _ = server.receive(try client.message(66, [0x08, 0x01]))
        #expect(server.isSubscribed)
        let batch = try noiseFrames([.send(server.frames(for: [Self.advertisement]))])
        #expect(try ESPHomeFrameEncoder.parseNoisePlaintext(try client.receive!.decrypt(batch[0])).type == 93)

        var tampered = try client.message(7, [])
        tampered[tampered.count - 1] ^= 0xFF
        let actions = server.receive(tampered)
        #expect(actions.last == .close(reason: .decryptionFailed))
    }

    @Test func wrongKeyIsRefusedWithTheTextTheClientExpects() throws {
        var server = ESPHomeSession(
            configuration: .init(identity: Self.identity, psk: Self.psk), crypto: OpenSSLNoiseCrypto())
        var client = NoiseClient(psk: Array(repeating: 9, count: 32))
        let actions = server.receive(try client.opening())
        let frames = try noiseFrames(actions)
        #expect(frames.count == 2)
        #expect(frames[1] == [0x01] + Array("Handshake MAC failure".utf8))
        #expect(actions.last == .close(reason: .handshake("Handshake MAC failure")))
    }

    @Test func plaintextClientOnAnEncryptedServerIsTold() throws {
        var server = ESPHomeSession(
            configuration: .init(identity: Self.identity, psk: Self.psk), crypto: OpenSSLNoiseCrypto())
        let actions = server.receive(hello())
        guard case let .send(bytes) = actions.first else {
            Issue.record("no reply")
            return
        }
        #expect(bytes.first == 0x01)
        #expect(server.isClosed)
    }
}
