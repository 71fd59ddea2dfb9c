/// The S-box and the combined round table, derived once from the field arithmetic of FIPS-197 section 5.1.1
/// (multiplicative inverse in GF(2^8) followed by the affine transformation) rather than typed in as literals.
extension AES128 {
    /// SubBytes: `sbox[x]` for every byte x.
    static let sbox: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for value in 0..<256 {
            let inverse = value == 0 ? 0 : inverse(UInt8(value))
            var result = inverse
            var rotated = inverse
            for _ in 0..<4 {
                rotated = (rotated << 1) | (rotated >> 7)
                result ^= rotated
            }
            table[value] = result ^ 0x63
        }
        return table
    }()

    /// SubBytes and MixColumns of one byte in the first row: (2·S, S, S, 3·S) packed big-endian. The tables for
    /// the other rows are byte rotations of this one, done at lookup time to keep the table at 1 KiB.
    package static let table: [UInt32] = {
        sbox.map { s in
            let twice = UInt32(multiply(s, 2))
            let thrice = UInt32(multiply(s, 3))
            return twice << 24 | UInt32(s) << 16 | UInt32(s) << 8 | thrice
        }
    }()

    /// Doubles a round constant (held in the low byte) in GF(2^8).
    package static func double(_ value: UInt32) -> UInt32 {
        UInt32(multiply(UInt8(truncatingIfNeeded: value), 2))
    }

    /// Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a
        var b = b
        var product: UInt8 = 0
        while b != 0 {
            if b & 1 != 0 { product ^= a }
            let carry = a & 0x80
            a <<= 1
            if carry != 0 { a ^= 0x1B }
            b >>= 1
        }
        return product
    }

    /// The multiplicative inverse in GF(2^8) (a^254), for non-zero `a`.
    static func inverse(_ a: UInt8) -> UInt8 {
        var result: UInt8 = 1
        var base = a
        var exponent = 254
        while exponent > 0 {
            if exponent & 1 != 0 { result = multiply(result, base) }
            base = multiply(base, base)
            exponent >>= 1
        }
        return result
    }
}
