import DeviceProtocols
import ESPHomeProxy
import Testing

/// libcrypto through `OpenSSLNoiseCrypto`, checked against published test vectors.
@Suite struct OpenSSLNoiseCryptoTests {
    let crypto = OpenSSLNoiseCrypto()

    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            out.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    @Test func sha256OfABC() {
        #expect(
            crypto.sha256(Array("abc".utf8))
                == Self.hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
    }

    @Test func hmacRFC4231Case2() {
        #expect(
            crypto.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
                == Self.hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test func x25519RFC7748() throws {
        let alicePrivate = Self.hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bobPublic = Self.hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        #expect(
            try crypto.x25519(privateKey: alicePrivate, publicKey: bobPublic)
                == Self.hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"))
        let pair = try crypto.generateX25519KeyPair()
        let other = try crypto.generateX25519KeyPair()
        #expect(
            try crypto.x25519(privateKey: pair.privateKey, publicKey: other.publicKey)
                == crypto.x25519(privateKey: other.privateKey, publicKey: pair.publicKey))
        #expect(throws: ESPHomeProtocolError.self) {
            try crypto.x25519(privateKey: alicePrivate, publicKey: [UInt8](repeating: 0, count: 32))
        }
    }

    @Test func chachaPolySealsOpensAndRejectsTampering() throws {
        let key = Array(0..<32).map(UInt8.init)
        let sealed = try crypto.seal(key: key, nonce: 7, ad: [1, 2, 3], plaintext: Array("advertisement".utf8))
        #expect(sealed.count == 13 + 16)
        #expect(try crypto.open(key: key, nonce: 7, ad: [1, 2, 3], ciphertext: sealed) == Array("advertisement".utf8))
        #expect(try crypto.open(key: key, nonce: 8, ad: [1, 2, 3], ciphertext: sealed) == nil)
        #expect(try crypto.open(key: key, nonce: 7, ad: [1, 2], ciphertext: sealed) == nil)
        var tampered = sealed
        tampered[0] ^= 1
        #expect(try crypto.open(key: key, nonce: 7, ad: [1, 2, 3], ciphertext: tampered) == nil)
        let empty = try crypto.seal(key: key, nonce: 0, ad: [], plaintext: [])
        #expect(empty.count == 16)
        #expect(try crypto.open(key: key, nonce: 0, ad: [], ciphertext: empty) == [])
    }
}
