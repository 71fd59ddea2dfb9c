/// One side of the `Noise_NNpsk0_25519_ChaChaPoly_SHA256` handshake (Noise Protocol Framework rev. 34),
/// the pattern ESPHome's encrypted API uses:
///
///     -> psk, e
///     <- e, ee
///
/// Both sides hold the 32-byte pre-shared key; the prologue binds the ESPHome framing ("NoiseAPIInit\0\0").
/// Payloads are empty. The initiator side exists for tests (a client within the suite).
public struct NoiseHandshake: Sendable {
    public static let protocolName = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    public static let esphomePrologue: [UInt8] = Array("NoiseAPIInit".utf8) + [0, 0]

    package let crypto: any NoiseCryptoProvider
    private var chainingKey: [UInt8]
    private var hash: [UInt8]
    private var cipher: NoiseCipherState?
    private let psk: [UInt8]
    private var ephemeral: (privateKey: [UInt8], publicKey: [UInt8])?
    private var remoteEphemeral: [UInt8] = []

    public init(psk: [UInt8], prologue: [UInt8] = NoiseHandshake.esphomePrologue, crypto: any NoiseCryptoProvider) {
        precondition(psk.count == 32, "the Noise pre-shared key has 32 bytes")
        self.crypto = crypto
        self.psk = psk
        let name = Array(NoiseHandshake.protocolName.utf8)
        // Longer than the hash: the initial h is the hash of the name (the name has 36 bytes).
        hash = name.count <= 32 ? name + [UInt8](repeating: 0, count: 32 - name.count) : crypto.sha256(name)
        chainingKey = hash
        mixHash(prologue)
    }

    /// Responder: reads the initiator's first message (`psk, e` and an empty encrypted payload) and returns
    /// the reply (`e, ee` and an empty encrypted payload) with the transport states (receive, send).
    /// A wrong key shows as the payload's tag failing: `.handshake("Handshake MAC failure")`.
    public mutating func respond(to message: [UInt8]) throws(ESPHomeProtocolError)
        -> (reply: [UInt8], receive: NoiseCipherState, send: NoiseCipherState)
    {
        guard message.count >= 48 else {
            throw .handshake("handshake message of \(message.count) bytes (expected at least 48)")
        }
        mixKeyAndHash(psk)
        remoteEphemeral = Array(message[0..<32])
        mixHash(remoteEphemeral)
        mixKey(remoteEphemeral)
        _ = try decryptAndHash(Array(message[32...]))
        let pair = try crypto.generateX25519KeyPair()
        mixHash(pair.publicKey)
        mixKey(pair.publicKey)
        mixKey(try crypto.x25519(privateKey: pair.privateKey, publicKey: remoteEphemeral))
        let tag = try encryptAndHash([])
        let (initiatorToResponder, responderToInitiator) = split()
        return (pair.publicKey + tag, initiatorToResponder, responderToInitiator)
    }

    /// Initiator: the first message.
    public mutating func initiate() throws(ESPHomeProtocolError) -> [UInt8] {
        mixKeyAndHash(psk)
        let pair = try crypto.generateX25519KeyPair()
        ephemeral = pair
        mixHash(pair.publicKey)
        mixKey(pair.publicKey)
        return pair.publicKey + (try encryptAndHash([]))
    }

    /// Initiator: reads the responder's reply; returns the transport states (send, receive).
    public mutating func finish(reply: [UInt8]) throws(ESPHomeProtocolError)
        -> (send: NoiseCipherState, receive: NoiseCipherState)
    {
        guard reply.count >= 48, let ephemeral else { throw .handshake("unexpected handshake reply") }
        let remote = Array(reply[0..<32])
        mixHash(remote)
        mixKey(remote)
        mixKey(try crypto.x25519(privateKey: ephemeral.privateKey, publicKey: remote))
        _ = try decryptAndHash(Array(reply[32...]))
        return split()
    }

    // MARK: SymmetricState

    private mutating func mixHash(_ data: [UInt8]) { hash = crypto.sha256(hash + data) }

    private mutating func mixKey(_ material: [UInt8]) {
        let out = hkdf(material, outputs: 2)
        chainingKey = out[0]
        cipher = NoiseCipherState(key: out[1], crypto: crypto)
    }

    private mutating func mixKeyAndHash(_ material: [UInt8]) {
        let out = hkdf(material, outputs: 3)
        chainingKey = out[0]
        mixHash(out[1])
        cipher = NoiseCipherState(key: out[2], crypto: crypto)
    }

    private mutating func encryptAndHash(_ plaintext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard var state = cipher else { throw .handshake("no key") }
        let out = try state.encrypt(ad: hash, plaintext)
        cipher = state
        mixHash(out)
        return out
    }

    private mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard var state = cipher else { throw .handshake("no key") }
        let plain: [UInt8]
        do {
            plain = try state.decrypt(ad: hash, ciphertext)
        } catch {
            throw .handshake("Handshake MAC failure")
        }
        cipher = state
        mixHash(ciphertext)
        return plain
    }

    private func split() -> (NoiseCipherState, NoiseCipherState) {
        let out = hkdf([], outputs: 2)
        return (NoiseCipherState(key: out[0], crypto: crypto), NoiseCipherState(key: out[1], crypto: crypto))
    }

    /// Noise's HKDF over HMAC-SHA256 with the chaining key as salt.
    private func hkdf(_ material: [UInt8], outputs: Int) -> [[UInt8]] {
        let temporary = crypto.hmacSHA256(key: chainingKey, data: material)
        var result: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...outputs {
            previous = crypto.hmacSHA256(key: temporary, data: previous + [UInt8(index)])
            result.append(previous)
        }
        return result
    }
}
