/// AES-128 block encryption (FIPS-197), encryption direction only.
///
/// Pure Swift so the core needs no C crypto library: the resolvable private address hash `ah()` of the Bluetooth
/// Core specification and BTHome's AES-CCM are built on it. The round keys are expanded once in `init`; encrypting
/// a block allocates nothing on the `encrypt(_:)` and `encrypt(words:)` paths (the round keys and the lookup table
/// are read through unsafe buffer pointers). This is not a constant-time implementation (table lookups indexed by
/// secret-dependent bytes); it resolves addresses and checks sensor payloads on a gateway, it does not guard a
/// channel against a local timing attacker.
public struct AES128: Sendable {
    /// One 16-byte block, byte 0 first (as FIPS-197 writes the input `in0 ... in15`).
    public typealias Block = (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
    )

    /// The 44 words of the expanded key, each big-endian (byte 0 of the key in the top bits of word 0).
    private let roundKeys: [UInt32]

    /// Expands `key`. Returns nil unless the key is exactly 16 bytes.
    public init?(key: [UInt8]) {
        guard key.count == 16 else { return nil }
        let sbox = AES128.sbox
        var words = [UInt32](repeating: 0, count: 44)
        for index in 0..<4 {
            words[index] =
                UInt32(key[4 * index]) << 24 | UInt32(key[4 * index + 1]) << 16
                | UInt32(key[4 * index + 2]) << 8 | UInt32(key[4 * index + 3])
        }
        var roundConstant: UInt32 = 0x01
        for index in 4..<44 {
            var temp = words[index - 1]
            if index % 4 == 0 {
                temp = (temp << 8) | (temp >> 24)
                temp =
                    UInt32(sbox[Int(temp >> 24)]) << 24 | UInt32(sbox[Int((temp >> 16) & 0xFF)]) << 16
                    | UInt32(sbox[Int((temp >> 8) & 0xFF)]) << 8 | UInt32(sbox[Int(temp & 0xFF)])
                temp ^= roundConstant << 24
                roundConstant = AES128.double(roundConstant)
            }
            words[index] = words[index - 4] ^ temp
        }
        self.roundKeys = words
    }

    /// Encrypts one 16-byte block and returns the 16-byte result.
    ///
    /// - Precondition: `block.count == 16` (a programmer error otherwise: callers build the block themselves).
    public func encrypt(block: [UInt8]) -> [UInt8] {
        precondition(block.count == 16, "AES128.encrypt(block:) takes exactly 16 bytes, got \(block.count)")
        var words: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        block.withUnsafeBufferPointer { bytes in
            words = (
                AES128.word(bytes, 0), AES128.word(bytes, 4), AES128.word(bytes, 8), AES128.word(bytes, 12)
            )
        }
        let out = encrypt(words: words)
        var result = [UInt8](repeating: 0, count: 16)
        for (offset, word) in [out.0, out.1, out.2, out.3].enumerated() {
            result[4 * offset] = UInt8(truncatingIfNeeded: word >> 24)
            result[4 * offset + 1] = UInt8(truncatingIfNeeded: word >> 16)
            result[4 * offset + 2] = UInt8(truncatingIfNeeded: word >> 8)
            result[4 * offset + 3] = UInt8(truncatingIfNeeded: word)
        }
        return result
    }

    /// Encrypts one block in place, without allocating.
    public func encrypt(_ block: inout Block) {
        let b = block
        let input = (
            UInt32(b.0) << 24 | UInt32(b.1) << 16 | UInt32(b.2) << 8 | UInt32(b.3),
            UInt32(b.4) << 24 | UInt32(b.5) << 16 | UInt32(b.6) << 8 | UInt32(b.7),
            UInt32(b.8) << 24 | UInt32(b.9) << 16 | UInt32(b.10) << 8 | UInt32(b.11),
            UInt32(b.12) << 24 | UInt32(b.13) << 16 | UInt32(b.14) << 8 | UInt32(b.15)
        )
        let o = encrypt(words: input)
        block = (
            UInt8(truncatingIfNeeded: o.0 >> 24), UInt8(truncatingIfNeeded: o.0 >> 16),
            UInt8(truncatingIfNeeded: o.0 >> 8), UInt8(truncatingIfNeeded: o.0),
            UInt8(truncatingIfNeeded: o.1 >> 24), UInt8(truncatingIfNeeded: o.1 >> 16),
            UInt8(truncatingIfNeeded: o.1 >> 8), UInt8(truncatingIfNeeded: o.1),
            UInt8(truncatingIfNeeded: o.2 >> 24), UInt8(truncatingIfNeeded: o.2 >> 16),
            UInt8(truncatingIfNeeded: o.2 >> 8), UInt8(truncatingIfNeeded: o.2),
            UInt8(truncatingIfNeeded: o.3 >> 24), UInt8(truncatingIfNeeded: o.3 >> 16),
            UInt8(truncatingIfNeeded: o.3 >> 8), UInt8(truncatingIfNeeded: o.3)
        )
    }

    /// Encrypts one block given as four big-endian words (bytes 0-3 in the first word, byte 0 in its top bits).
    /// The fastest path: no allocation, no byte shuffling.
    public func encrypt(words input: (UInt32, UInt32, UInt32, UInt32)) -> (UInt32, UInt32, UInt32, UInt32) {
        roundKeys.withUnsafeBufferPointer { rk in
            AES128.table.withUnsafeBufferPointer { te in
                AES128.sbox.withUnsafeBufferPointer { sbox in
                    var s0 = input.0 ^ rk[0]
                    var s1 = input.1 ^ rk[1]
                    var s2 = input.2 ^ rk[2]
                    var s3 = input.3 ^ rk[3]
                    for round in 1..<10 {
                        let k = 4 * round
                        let t0 = AES128.mix(te, s0, s1, s2, s3) ^ rk[k]
                        let t1 = AES128.mix(te, s1, s2, s3, s0) ^ rk[k + 1]
                        let t2 = AES128.mix(te, s2, s3, s0, s1) ^ rk[k + 2]
                        let t3 = AES128.mix(te, s3, s0, s1, s2) ^ rk[k + 3]
                        s0 = t0
                        s1 = t1
                        s2 = t2
                        s3 = t3
                    }
                    return (
                        AES128.last(sbox, s0, s1, s2, s3) ^ rk[40],
                        AES128.last(sbox, s1, s2, s3, s0) ^ rk[41],
                        AES128.last(sbox, s2, s3, s0, s1) ^ rk[42],
                        AES128.last(sbox, s3, s0, s1, s2) ^ rk[43]
                    )
                }
            }
        }
    }

    /// One column of SubBytes + ShiftRows + MixColumns through the combined table (rotations give the other three).
    @inline(__always)
    private static func mix(
        _ te: UnsafeBufferPointer<UInt32>, _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32
    ) -> UInt32 {
        let x0 = te[Int(a >> 24)]
        let x1 = te[Int((b >> 16) & 0xFF)]
        let x2 = te[Int((c >> 8) & 0xFF)]
        let x3 = te[Int(d & 0xFF)]
        return x0 ^ ((x1 >> 8) | (x1 << 24)) ^ ((x2 >> 16) | (x2 << 16)) ^ ((x3 >> 24) | (x3 << 8))
    }

    /// One column of the last round: SubBytes + ShiftRows, no MixColumns.
    @inline(__always)
    private static func last(
        _ sbox: UnsafeBufferPointer<UInt8>, _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32
    ) -> UInt32 {
        UInt32(sbox[Int(a >> 24)]) << 24 | UInt32(sbox[Int((b >> 16) & 0xFF)]) << 16
            | UInt32(sbox[Int((c >> 8) & 0xFF)]) << 8 | UInt32(sbox[Int(d & 0xFF)])
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
