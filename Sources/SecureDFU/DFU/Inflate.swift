/// A raw DEFLATE decoder (RFC 1951: stored, fixed and dynamic Huffman blocks), for the entries of a DFU package's
/// `.zip`. Written for untrusted input: every read is bounds-checked, codes are checked for over-subscription,
/// back-references for their distance, and the output may not grow past `limit` (a zip bomb stops there).
/// Decoding is canonical-code-by-length (one bit at a time), slow but small; DFU images are at most a few
/// hundred KiB. Terminates: each symbol consumes input bits, and output is capped.
public enum Inflate {
    /// Why the stream could not be decoded: the byte offset reached and the reason.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "\(reason) (at compressed byte \(offset))" }
    }

    /// Decodes `input` (a raw DEFLATE stream, no zlib or gzip header); fails once the output would exceed `limit`.
    public static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var state = InflateState(input: input, limit: limit)
        try state.run()
        return state.output
    }
}

/// A canonical Huffman code: how many codes there are of each length, and the symbols in code order.
struct HuffmanCode {
    package var counts = [Int](repeating: 0, count: 16)
    package var symbols: [Int] = []

    /// nil when the lengths over-subscribe the code space (an incomplete code is allowed; unused codes fail when read).
    package init?(lengths: [Int]) {
        for length in lengths { counts[length] += 1 }
        counts[0] = 0
        var left = 1
        for length in 1...15 {
            left = left << 1 - counts[length]
            if left < 0 { return nil }
        }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
    }
}

struct InflateState {
    package let input: [UInt8]
    package let limit: Int
    package var output: [UInt8] = []
    package var position = 0
    var bitBuffer = 0
    var bitCount = 0

    static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    /// The order in which a dynamic block gives the code length code's lengths.
    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    package init(input: [UInt8], limit: Int) {
        self.input = input
        self.limit = limit
        output.reserveCapacity(min(limit, 1 << 20))
    }

    package func failure(_ reason: String) -> Inflate.Failure { Inflate.Failure(offset: position, reason: reason) }

    package mutating func bits(_ count: Int) throws(Inflate.Failure) -> Int {
        while bitCount < count {
            guard position < input.count else { throw failure("the stream ends early") }
            bitBuffer |= Int(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        let value = bitBuffer & (1 << count - 1)
        bitBuffer >>= count
        bitCount -= count
        return value
    }

    package mutating func run() throws(Inflate.Failure) {
        var last = false
        while !last {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0: try stored()
            case 1: try codes(Self.fixedLiterals, Self.fixedDistances)
            case 2:
                let (literals, distances) = try dynamicCodes()
                try codes(literals, distances)
            default: throw failure("reserved block type 3")
            }
        }
    }

    package mutating func stored() throws(Inflate.Failure) {
        bitBuffer = 0
        bitCount = 0
        guard input.count - position >= 4 else { throw failure("a stored block's length is cut off") }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        position += 4
        guard length == ~complement & 0xFFFF else { throw failure("a stored block's length does not match its check") }
        guard input.count - position >= length else { throw failure("a stored block is cut off") }
        try reserve(length)
        output += input[position..<(position + length)]
        position += length
    }

    package mutating func reserve(_ count: Int) throws(Inflate.Failure) {
        guard count <= limit - output.count else { throw failure("the output exceeds \(limit) bytes") }
    }

    package mutating func decode(_ code: HuffmanCode) throws(Inflate.Failure) -> Int {
        var value = 0
        var first = 0
        var index = 0
        for length in 1...15 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - first < count { return code.symbols[index + value - first] }
            index += count
            first = (first + count) << 1
            value <<= 1
        }
        throw failure("a code that is not in the table")
    }

    static let fixedLiterals = HuffmanCode(
        lengths: (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 })!
    static let fixedDistances = HuffmanCode(lengths: [Int](repeating: 5, count: 30))!

    mutating func dynamicCodes() throws(Inflate.Failure) -> (HuffmanCode, HuffmanCode) {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let lengthCodeCount = try bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw failure("too many codes in a dynamic block") }
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<lengthCodeCount { codeLengths[Self.codeLengthOrder[index]] = try bits(3) }
        guard let lengthCode = HuffmanCode(lengths: codeLengths) else {
            throw failure("an over-subscribed code length code")
        }
        var lengths: [Int] = []
        let total = literalCount + distanceCount
        while lengths.count < total {
            let symbol = try decode(lengthCode)
            var repeated: Int
            var count: Int
            switch symbol {
            case 0..<16:
                lengths.append(symbol)
                continue
            case 16:
                guard let previous = lengths.last else { throw failure("a repeat with no previous length") }
                repeated = previous
                count = 3 + (try bits(2))
            case 17:
                repeated = 0
                count = 3 + (try bits(3))
            default:
                repeated = 0
                count = 11 + (try bits(7))
            }
            guard lengths.count + count <= total else { throw failure("code lengths run past their count") }
            lengths += [Int](repeating: repeated, count: count)
        }
        guard lengths[256] != 0 else { throw failure("no end-of-block code") }
        guard let literals = HuffmanCode(lengths: Array(lengths[0..<literalCount])),
            let distances = HuffmanCode(lengths: Array(lengths[literalCount...]))
        else { throw failure("an over-subscribed literal or distance code") }
        return (literals, distances)
    }

    package mutating func codes(_ literals: HuffmanCode, _ distances: HuffmanCode) throws(Inflate.Failure) {
        while true {
            let symbol = try decode(literals)
            if symbol < 256 {
                try reserve(1)
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthIndex = symbol - 257
            guard lengthIndex < Self.lengthBase.count else { throw failure("length symbol \(symbol)") }
            let length = Self.lengthBase[lengthIndex] + (try bits(Self.lengthExtra[lengthIndex]))
            let distanceSymbol = try decode(distances)
            guard distanceSymbol < Self.distanceBase.count else { throw failure("distance symbol \(distanceSymbol)") }
            let distance = Self.distanceBase[distanceSymbol] + (try bits(Self.distanceExtra[distanceSymbol]))
            guard distance <= output.count else { throw failure("a distance of \(distance) before the start") }
            try reserve(length)
            let start = output.count - distance
            for index in 0..<length { output.append(output[start + index]) }
        }
    }
}
