import CCrypto
import DeviceProtocols

/// The Noise primitives from OpenSSL's libcrypto (EVP): X25519, ChaCha20-Poly1305, SHA-256, HMAC-SHA256.
/// Stateless; every call allocates and frees its own OpenSSL contexts.
public struct OpenSSLNoiseCrypto: NoiseCryptoProvider {
    public init() {}

    /// The corresponding C function is `EVP_Digest` with `EVP_sha256`.
    public func sha256(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = data.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &out, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return out
    }

    /// The corresponding C function is `HMAC` with `EVP_sha256`.
    public func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBufferPointer { k in
            data.withUnsafeBufferPointer { d in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC(SHA-256) failed")
        return out
    }

    /// The corresponding C functions are `EVP_PKEY_keygen` and `EVP_PKEY_get_raw_{private,public}_key`.
    public func generateX25519KeyPair() throws(ESPHomeProtocolError) -> (privateKey: [UInt8], publicKey: [UInt8]) {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nil) else {
            throw .handshake("EVP_PKEY_CTX_new_id failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else {
            throw .handshake("X25519 key generation failed")
        }
        defer { EVP_PKEY_free(key) }
        var privateKey = [UInt8](repeating: 0, count: 32)
        var publicKey = [UInt8](repeating: 0, count: 32)
        var privateLength = 32
        var publicLength = 32
        guard EVP_PKEY_get_raw_private_key(key, &privateKey, &privateLength) == 1,
            EVP_PKEY_get_raw_public_key(key, &publicKey, &publicLength) == 1,
            privateLength == 32, publicLength == 32
        else { throw .handshake("cannot read the X25519 key") }
        return (privateKey, publicKey)
    }

    /// The corresponding C functions are `EVP_PKEY_derive_set_peer` and `EVP_PKEY_derive`.
    public func x25519(privateKey: [UInt8], publicKey: [UInt8]) throws(ESPHomeProtocolError) -> [UInt8] {
        guard privateKey.count == 32, publicKey.count == 32,
            let own = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, privateKey, 32)
        else {
            throw .handshake("bad X25519 private key")
        }
        defer { EVP_PKEY_free(own) }
        guard let peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, publicKey, 32) else {
            throw .handshake("bad X25519 public key")
        }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new(own, nil) else { throw .handshake("EVP_PKEY_CTX_new failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = 32
        // OpenSSL refuses an all-zero result (a low-order peer key).
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1,
            EVP_PKEY_derive(context, &secret, &length) == 1, length == 32
        else {
            throw .handshake("X25519 key agreement failed")
        }
        return secret
    }

    private static func nonceBytes(_ nonce: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: nonce >> (8 * UInt64($0))) }
    }

    /// The corresponding C functions are `EVP_EncryptInit_ex` with `EVP_chacha20_poly1305`, `EVP_EncryptUpdate`,
    /// `EVP_EncryptFinal_ex` and `EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_GET_TAG)`.
    public func seal(key: [UInt8], nonce: UInt64, ad: [UInt8], plaintext: [UInt8]) throws(ESPHomeProtocolError)
        -> [UInt8]
    {
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { throw .handshake("cipher setup failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        let iv = Self.nonceBytes(nonce)
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        var ok = EVP_EncryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, iv) == 1
        if ok, !ad.isEmpty { ok = EVP_EncryptUpdate(context, nil, &length, ad, Int32(ad.count)) == 1 }
        var written = 0
        if ok, !plaintext.isEmpty {
            ok = out.withUnsafeMutableBufferPointer { buffer in
                EVP_EncryptUpdate(context, buffer.baseAddress, &length, plaintext, Int32(plaintext.count)) == 1
            }
            written = Int(length)
        }
        if ok {
            ok = out.withUnsafeMutableBufferPointer { buffer in
                EVP_EncryptFinal_ex(context, buffer.baseAddress! + written, &length) == 1
            }
            written += Int(length)
        }
        if ok {
            ok = out.withUnsafeMutableBufferPointer { buffer in
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, buffer.baseAddress! + written) == 1
            }
        }
        guard ok, written == plaintext.count else { throw .handshake("ChaCha20-Poly1305 encryption failed") }
        return out
    }

    /// The corresponding C functions are `EVP_DecryptInit_ex` with `EVP_chacha20_poly1305`,
    /// `EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_SET_TAG)`, `EVP_DecryptUpdate` and `EVP_DecryptFinal_ex`.
    public func open(key: [UInt8], nonce: UInt64, ad: [UInt8], ciphertext: [UInt8]) throws(ESPHomeProtocolError)
        -> [UInt8]?
    {
        guard ciphertext.count >= 16 else { return nil }
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { throw .handshake("cipher setup failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        let iv = Self.nonceBytes(nonce)
        let bodyCount = ciphertext.count - 16
        var tag = Array(ciphertext[bodyCount...])
        var out = [UInt8](repeating: 0, count: max(bodyCount, 1))
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, iv) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, &tag) == 1
        else {
            throw .handshake("cipher setup failed")
        }
        if !ad.isEmpty, EVP_DecryptUpdate(context, nil, &length, ad, Int32(ad.count)) != 1 { return nil }
        var written = 0
        if bodyCount > 0 {
            let ok = ciphertext.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { buffer in
                    EVP_DecryptUpdate(context, buffer.baseAddress, &length, input.baseAddress, Int32(bodyCount)) == 1
                }
            }
            guard ok else { return nil }
            written = Int(length)
        }
        let verified = out.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(context, buffer.baseAddress! + written, &length) == 1
        }
        guard verified else { return nil }
        return Array(out[0..<bodyCount])
    }
}
