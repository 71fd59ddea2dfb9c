import Testing

@testable import BeaconFormats

/// AES-128 against the published vectors: FIPS-197 appendices B and C.1 and NIST SP 800-38A F.1.1 (ECB).
@Suite struct AES128Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let source: String, key: String, plaintext: String, ciphertext: String
        var testDescription: String { source }
    }

    static let vectors: [Vector] = [
        Vector(
            source: "FIPS-197 C.1", key: "000102030405060708090a0b0c0d0e0f",
            plaintext: "00112233445566778899aabbccddeeff", ciphertext: "69c4e0d86a7b0430d8cdb78070b4c55a"),
        Vector(
            source: "FIPS-197 B", key: "2b7e151628aed2a6abf7158809cf4f3c",
            plaintext: "3243f6a8885a308d313198a2e0370734", ciphertext: "3925841d02dc09fbdc118597196a0b32"),
        Vector(
            source: "SP 800-38A F.1.1 block 1", key: "2b7e151628aed2a6abf7158809cf4f3c",
            plaintext: "6bc1bee22e409f96e93d7e117393172a", ciphertext: "3ad77bb40d7a3660a89ecaf32466ef97"),
        Vector(
            source: "SP 800-38A F.1.1 block 2", key: "2b7e151628aed2a6abf7158809cf4f3c",
            plaintext: "ae2d8a571e03ac9c9eb76fac45af8e51", ciphertext: "f5d3d58503b9699de785895a96fdbaaf"),
        Vector(
            source: "SP 800-38A F.1.1 block 3", key: "2b7e151628aed2a6abf7158809cf4f3c",
            plaintext: "30c81c46a35ce411e5fbc1191a0a52ef", ciphertext: "43b1cd7f598ece23881b00e3ed030688"),
        Vector(
            source: "SP 800-38A F.1.1 block 4", key: "2b7e151628aed2a6abf7158809cf4f3c",
            plaintext: "f69f2445df4f9b17ad2b417be66c3710", ciphertext: "7b0c785e27e8ad3f8223207104725dd4"),
    ]

    @Test(arguments: vectors)
    func encryptsArrayBlock(_ vector: Vector) throws {
        let cipher = try #require(AES128(key: DecodingFixtures.hex(vector.key)))
        #expect(
            cipher.encrypt(block: DecodingFixtures.hex(vector.plaintext)) == DecodingFixtures.hex(vector.ciphertext))
    }

    @Test(arguments: vectors)
    func encryptsInPlaceAndAsWords(_ vector: Vector) throws {
        let cipher = try #require(AES128(key: DecodingFixtures.hex(vector.key)))
        let p = DecodingFixtures.hex(vector.plaintext)
        var block: AES128.Block = (
            p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
            p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]
        )
        cipher.encrypt(&block)
        let out = withUnsafeBytes(of: block) { Array($0) }
        #expect(out == DecodingFixtures.hex(vector.ciphertext))

        func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let c = DecodingFixtures.hex(vector.ciphertext)
        let words = cipher.encrypt(words: (word(p, 0), word(p, 4), word(p, 8), word(p, 12)))
        #expect([words.0, words.1, words.2, words.3] == [word(c, 0), word(c, 4), word(c, 8), word(c, 12)])
    }

    @Test(arguments: [0, 1, 15, 17, 32])
    func rejectsKeysThatAreNot16Bytes(_ count: Int) {
        #expect(AES128(key: [UInt8](repeating: 0x2B, count: count)) == nil)
    }

    @Test func derivedSBoxMatchesFIPS197Figure7() {
        #expect(AES128.sbox.count == 256)
        #expect(AES128.sbox[0x00] == 0x63)
        #expect(AES128.sbox[0x01] == 0x7C)
        #expect(AES128.sbox[0x53] == 0xED)
        #expect(AES128.sbox[0x9A] == 0xB8)
        #expect(AES128.sbox[0xFF] == 0x16)
        #expect(Set(AES128.sbox).count == 256, "the S-box is a permutation")
    }

    /// One bit of key changes the output; the same key and block give the same output.
    @Test func repeatedEncryptionIsDeterministicAndKeyed() throws {
        let a = try #require(AES128(key: DecodingFixtures.hex("2b7e151628aed2a6abf7158809cf4f3c")))
        let b = try #require(AES128(key: DecodingFixtures.hex("2b7e151628aed2a6abf7158809cf4f3d")))
        let block = [UInt8](repeating: 0, count: 16)
        #expect(a.encrypt(block: block) == a.encrypt(block: block))
        #expect(a.encrypt(block: block) != b.encrypt(block: block))
    }
}
