/// The primitives of `Noise_NNpsk0_25519_ChaChaPoly_SHA256`, supplied by an adapter (OpenSSL's libcrypto in
/// the `ESPHomeProxy` module) so the handshake logic here stays free of C and testable with any provider.
public protocol NoiseCryptoProvider: Sendable {
    func sha256(_ data: [UInt8]) -> [UInt8]
    func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8]
    /// A fresh ephemeral X25519 key pair (32-byte private key, 32-byte public key).
    func generateX25519KeyPair() throws(ESPHomeProtocolError) -> (privateKey: [UInt8], publicKey: [UInt8])
    /// The X25519 shared secret (32 bytes).
    func x25519(privateKey: [UInt8], publicKey: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8]
    /// ChaCha20-Poly1305 (RFC 8439) with Noise's nonce: 4 zero bytes, then `nonce` little endian. Returns
    /// ciphertext followed by the 16-byte tag.
    func seal(key: [UInt8], nonce: UInt64, ad: [UInt8], plaintext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8]
    /// The plaintext, or nil when the tag does not verify.
    func open(key: [UInt8], nonce: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8]?
}

/// Noise's CipherState: a key and a nonce counter.
public struct NoiseCipherState: Sendable {
    package let key: [UInt8]
    private(set) var nonce: UInt64 = 0
    package let crypto: any NoiseCryptoProvider

    package init(key: [UInt8], crypto: any NoiseCryptoProvider) {
        self.key = key
        self.crypto = crypto
    }

    public mutating func encrypt(ad: [UInt8] = [], _ plaintext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard nonce < UInt64.max else { throw .handshake("nonce exhausted") }
        let out = try crypto.seal(key: key, nonce: nonce, ad: ad, plaintext: plaintext)
        nonce += 1
        return out
    }

    public mutating func decrypt(ad: [UInt8] = [], _ ciphertext: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard ciphertext.count >= 16 else { throw .decryptionFailed }
        guard nonce < UInt64.max else { throw .handshake("nonce exhausted") }
        guard let plain = try crypto.open(key: key, nonce: nonce, ad: ad, ciphertext: ciphertext) else {
            throw .decryptionFailed
        }
        nonce += 1
        return plain
    }
}
