// The ESPHome native API part of the libFuzzer target (scripts/fuzz.sh; called from FuzzEntry.swift): what an
// API client sends is untrusted, so the frame decoder, the message decoder and the connection state machine must
// only ever return actions or throw. Seeds: Tests/Fuzz/corpus/esphome-* (plaintext sessions, Noise frames, noise).

@testable import BeaconModel
@testable import DeviceProtocols

let fuzzIdentity = ESPHomeDeviceIdentity(
    name: "fuzz-node", friendlyName: "Fuzz", macAddress: "02:00:00:00:00:01",
    bluetoothMACAddress: "02:00:00:00:00:01", version: "0.0.0", usesPassword: false)
/// The same node with active connections on: connection requests reach the session's proxy paths.
let fuzzActiveIdentity: ESPHomeDeviceIdentity = {
    var identity = fuzzIdentity
    identity.activeConnections = true
    return identity
}()
let fuzzPSK = [UInt8](repeating: 0x5A, count: 32)
let fuzzAdvertisements = [
    ESPHomeRawAdvertisement(address: 0x0011_2233_4455, rssi: -60, addressType: 1, data: [2, 1, 6])
]

/// The bytes as an ESPHome client's stream: both framings, every message decoder, sessions with and without a
/// password, and an encrypted session after a completed handshake whose messages are the bytes' plaintext frames.
func fuzzESPHome(_ bytes: [UInt8]) -> Int {
    var sink = 0
    // Fed in two pieces, split where the first byte says, so incomplete frames and resumption run too.
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)

    // 1. The frame decoder, both framings, with a small limit so oversized frames are reachable.
    for framing in [ESPHomeFrameDecoder.Framing.plaintext, .noise] {
        var decoder = ESPHomeFrameDecoder(framing: framing, maxFrameSize: 256)
        decoder.append(bytes[..<split])
        do {
            while let frame = try decoder.next() { sink &+= frame.body.count &+ Int(frame.type) }
            decoder.append(bytes[split...])
            while let frame = try decoder.next() {
                sink &+= frame.body.count
                // 2. Each frame's body as every message type the server decodes.
                if let message = try? ESPHomeClientMessage.decode(type: frame.type, body: frame.body[...]) {
                    sink &+= message == .pingRequest ? 1 : 2
                }
                if framing == .noise, let parsed = try? ESPHomeFrameEncoder.parseNoisePlaintext(frame.body) {
                    sink &+= parsed.body.count
                }
            }
        } catch {
            sink &+= error.description.utf8.count
        }
    }
    if bytes.count > 1, let message = try? ESPHomeClientMessage.decode(type: UInt32(bytes[0]), body: bytes[1...]) {
        sink &+= message == .disconnectRequest ? 1 : 2
    }

    // 3. Plaintext sessions without a password (active connections on: the proxy requests) and with one.
    for password in [nil, "secret"] as [String?] {
        var session = ESPHomeSession(
            configuration: .init(
                identity: password == nil ? fuzzActiveIdentity : fuzzIdentity, password: password, maxFrameSize: 256))
        sink &+= count(session.receive(bytes[..<split])) &+ count(session.receive(bytes[split...]))
        sink &+= session.frames(for: fuzzAdvertisements).count
    }

    // 4. An encrypted session: the bytes as the client's handshake frames (fails, as a wrong key would) ...
    var raw = ESPHomeSession(configuration: .init(identity: fuzzIdentity, psk: fuzzPSK), crypto: FuzzNoiseCrypto())
    sink &+= count(raw.receive(bytes))
    // ... and after a real handshake (with the test double's primitives), the bytes' plaintext frames sent as
    // encrypted messages, plus one Noise frame that is the bytes themselves (tag fails).
    sink &+= fuzzEncryptedSession(bytes)
    return sink
}

private func count(_ actions: [ESPHomeSession.Action]) -> Int {
    actions.reduce(0) { total, action in
        switch action {
        case let .send(out): total &+ out.count
        case let .close(reason): total &+ (reason == nil ? 1 : 2)
        case let .bluetooth(request): total &+ String(describing: request).utf8.count
        case .connectionsFree: total &+ 3
        }
    }
}

private func fuzzEncryptedSession(_ bytes: [UInt8]) -> Int {
    let crypto = FuzzNoiseCrypto()
    var session = ESPHomeSession(configuration: .init(identity: fuzzIdentity, psk: fuzzPSK), crypto: crypto)
    var client = NoiseHandshake(psk: fuzzPSK, crypto: crypto)
    // The harness's own handshake is deterministic: failing it is a bug here, reported as a crash.
    guard let first = try? client.initiate() else { preconditionFailure("fuzz harness: initiate failed") }
    var hello: [UInt8] = []
    ESPHomeFrameEncoder.noise(payload: [], into: &hello)
    ESPHomeFrameEncoder.noise(payload: [0x00] + first, into: &hello)
    var replies = ESPHomeFrameDecoder(framing: .noise)
    for case let .send(out) in session.receive(hello) { replies.append(out) }
    _ = try? replies.next()  // the server hello
    guard let reply = try? replies.next(), reply.body.first == 0x00,
        let ciphers = try? client.finish(reply: Array(reply.body.dropFirst()))
    else {
        preconditionFailure("fuzz harness: the handshake with the session failed")
    }
    var send = ciphers.send
    var sink = 0
    var frames = ESPHomeFrameDecoder(framing: .plaintext, maxFrameSize: 1024)
    frames.append(bytes)
    while let frame = try? frames.next() {
        guard let sealed = try? send.encrypt(ESPHomeFrameEncoder.noisePlaintext(type: frame.type, body: frame.body))
        else { break }
        var out: [UInt8] = []
        ESPHomeFrameEncoder.noise(payload: sealed, into: &out)
        sink &+= count(session.receive(out))
    }
    sink &+= session.frames(for: fuzzAdvertisements).count
    var out: [UInt8] = []
    ESPHomeFrameEncoder.noise(payload: Array(bytes.prefix(1024)), into: &out)
    return sink &+ count(session.receive(out))
}

/// A deterministic stand-in for the Noise primitives, for fuzzing only: NOT cryptography. It keeps the shapes
/// (32-byte hashes and keys, a 16-byte tag that must verify, a shared secret both sides agree on) so the handshake
/// and transport code run their real paths without libcrypto (the fuzz target links the core's modules alone).
struct FuzzNoiseCrypto: NoiseCryptoProvider {
    func sha256(_ data: [UInt8]) -> [UInt8] { mix(data, seed: 0x9E37_79B9_7F4A_7C15) }

    func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] { mix(key + [0xA5] + data, seed: 0xC2B2_AE3D_27D4_EB4F) }

    func generateX25519KeyPair() throws(ESPHomeProtocolError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
        let key = [UInt8](repeating: 0x42, count: 32)
        return (key, key)
    }

    /// Public keys equal private keys here, so XOR is a secret both sides compute alike.
    func x25519(privateKey: [UInt8], publicKey: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard privateKey.count == 32, publicKey.count == 32 else { throw .handshake("key size") }
        return zip(privateKey, publicKey).map { $0 ^ $1 }
    }

    func seal(key: [UInt8], nonce: UInt64, ad: [UInt8], plaintext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        let stream = keystream(key: key, nonce: nonce, count: plaintext.count)
        let ciphertext = zip(plaintext, stream).map { $0 ^ $1 }
        return ciphertext + tag(key: key, nonce: nonce, ad: ad, ciphertext: ciphertext)
    }

    func open(key: [UInt8], nonce: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8]? {
        guard ciphertext.count >= 16 else { return nil }
        let body = Array(ciphertext.dropLast(16))
        guard Array(ciphertext.suffix(16)) == tag(key: key, nonce: nonce, ad: ad, ciphertext: body) else { return nil }
        return zip(body, keystream(key: key, nonce: nonce, count: body.count)).map { $0 ^ $1 }
    }

    private func tag(key: [UInt8], nonce: UInt64, ad: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        Array(mix(key + ad + ciphertext + [UInt8(truncatingIfNeeded: nonce)], seed: nonce).prefix(16))
    }

    private func keystream(key: [UInt8], nonce: UInt64, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var block: UInt64 = 0
        while out.count < count {
            out += mix(key + [UInt8(truncatingIfNeeded: block)], seed: nonce &+ block)
            block &+= 1
        }
        return Array(out.prefix(count))
    }

    /// 32 bytes from four FNV-1a-style lanes over the data.
    private func mix(_ data: [UInt8], seed: UInt64) -> [UInt8] {
        var lanes: [UInt64] = [0xCBF2_9CE4_8422_2325 ^ seed, 0x1000_0000_01B3 &+ seed, seed &* 31 &+ 7, ~seed]
        for (index, byte) in data.enumerated() {
            let lane = index & 3
            lanes[lane] = (lanes[lane] ^ UInt64(byte)) &* 0x1000_0000_01B3
        }
        var out: [UInt8] = []
        for lane in lanes {
            var value = lane ^ (lane >> 29)
            value = value &* 0xBF58_476D_1CE4_E5B9
            for shift in stride(from: 0, to: 64, by: 8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        return out
    }
}
