/// AES-CCM (NIST SP 800-38C, RFC 3610) on top of `AES128`: CBC-MAC over the formatted header, associated data and
/// message, CTR-mode encryption of the message and the tag. BTHome v2 uses a 13-byte nonce (so a 2-byte length
/// field) and a 4-byte tag.
public struct AESCCM: Sendable {
    package let cipher: AES128
    /// Tag length M in bytes: 4, 6, 8, 10, 12, 14 or 16.
    public let tagLength: Int

    /// - Precondition: a valid tag length (a programmer error otherwise).
    public init(cipher: AES128, tagLength: Int) {
        precondition([4, 6, 8, 10, 12, 14, 16].contains(tagLength), "AES-CCM tag length \(tagLength) is not allowed")
        self.cipher = cipher
        self.tagLength = tagLength
    }

    /// The ciphertext and tag of `plaintext`; nil when the nonce is not 7-13 bytes or the message is too long for
    /// the length field the nonce leaves.
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []) -> (
        ciphertext: [UInt8], tag: [UInt8]
    )? {
        guard let mac = authenticate(plaintext, nonce: nonce, associatedData: associatedData) else { return nil }
        let ciphertext = crypt(plaintext, nonce: nonce)
        return (ciphertext, tagMask(mac, nonce: nonce))
    }

    /// The plaintext of `ciphertext` when `tag` authenticates it (and the associated data), else nil.
    public func open(_ ciphertext: [UInt8], tag: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []) -> [UInt8]? {
        guard tag.count == tagLength, (7...13).contains(nonce.count) else { return nil }
        let plaintext = crypt(ciphertext, nonce: nonce)
        guard let mac = authenticate(plaintext, nonce: nonce, associatedData: associatedData) else { return nil }
        let expected = tagMask(mac, nonce: nonce)
        var difference: UInt8 = 0
        for index in 0..<tagLength { difference |= expected[index] ^ tag[index] }
        return difference == 0 ? plaintext : nil
    }

    /// CBC-MAC T (the first M bytes of the last chaining value) over B0, the associated data and the message.
    func authenticate(_ message: [UInt8], nonce: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        let lengthSize = 15 - nonce.count
        guard (2...8).contains(lengthSize), lengthSize >= 8 || message.count < 1 << (8 * lengthSize),
            associatedData.count < 0xFF00
        else { return nil }
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = (associatedData.isEmpty ? 0 : 0x40) | UInt8((tagLength - 2) / 2) << 3 | UInt8(lengthSize - 1)
        for index in 0..<nonce.count { block[1 + index] = nonce[index] }
        var length = message.count
        for index in stride(from: 15, to: 15 - lengthSize, by: -1) {
            block[index] = UInt8(truncatingIfNeeded: length)
            length >>= 8
        }
        var chain = cipher.encrypt(block: block)
        func absorb(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                for index in 0..<16 where offset + index < bytes.count { chain[index] ^= bytes[offset + index] }
                chain = cipher.encrypt(block: chain)
                offset += 16
            }
        }
        if !associatedData.isEmpty {
            absorb([UInt8(associatedData.count >> 8), UInt8(associatedData.count & 0xFF)] + associatedData)
        }
        absorb(message)
        return Array(chain.prefix(tagLength))
    }

    /// The counter block A_i: flags (L - 1), the nonce, the counter i in L bytes big endian.
    func counterBlock(_ counter: Int, nonce: [UInt8]) -> [UInt8] {
        let lengthSize = 15 - nonce.count
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = UInt8(lengthSize - 1)
        for index in 0..<nonce.count { block[1 + index] = nonce[index] }
        var value = counter
        for index in stride(from: 15, to: 15 - lengthSize, by: -1) {
            block[index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        return block
    }

    /// CTR mode from counter 1 (encryption and decryption are the same).
    func crypt(_ input: [UInt8], nonce: [UInt8]) -> [UInt8] {
        var output = input
        var counter = 1
        var offset = 0
        while offset < input.count {
            let stream = cipher.encrypt(block: counterBlock(counter, nonce: nonce))
            for index in 0..<16 where offset + index < input.count { output[offset + index] ^= stream[index] }
            offset += 16
            counter += 1
        }
        return output
    }

    /// The transmitted tag: T xor the first M bytes of S0 = E(A0).
    func tagMask(_ mac: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let stream = cipher.encrypt(block: counterBlock(0, nonce: nonce))
        return (0..<tagLength).map { mac[$0] ^ stream[$0] }
    }
}
