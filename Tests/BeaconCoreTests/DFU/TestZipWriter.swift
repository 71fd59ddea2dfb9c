import GATTTestPeer

@testable import SecureDFU

/// Writes `.zip` files for the package tests: stored entries, or deflated ones with fixed Huffman codes and a
/// greedy match search (enough to exercise literals, lengths and distances; the dynamic-code path is covered by
/// a zip made by Python's zipfile in `ZipArchiveTests`).
struct TestZipWriter {
    struct Entry {
        var name: String
        var data: [UInt8]
        var deflate = true
        /// Overrides for hostile archives.
        var statedCRC: UInt32?
        var statedSize: Int?
        var rawCompressed: [UInt8]?
    }

    var entries: [Entry] = []

    mutating func add(_ name: String, _ data: [UInt8], deflate: Bool = true) {
        entries.append(Entry(name: name, data: data, deflate: deflate))
    }

    func bytes() -> [UInt8] {
        TestZipFile.bytes(
            entries.map { entry in
                TestZipFile.Entry(
                    name: entry.name, method: entry.deflate ? 8 : 0,
                    compressed: entry.rawCompressed ?? (entry.deflate ? Self.deflate(entry.data) : entry.data),
                    crc: entry.statedCRC ?? CRC32.checksum(entry.data),
                    size: UInt32(entry.statedSize ?? entry.data.count))
            })
    }

    /// LSB-first bit output; Huffman codes go in most significant bit first.
    struct BitWriter {
        var bytes: [UInt8] = []
        var buffer = 0
        var count = 0
        mutating func put(_ value: Int, _ bits: Int) {
            buffer |= value << count
            count += bits
            while count >= 8 {
                bytes.append(UInt8(buffer & 0xFF))
                buffer >>= 8
                count -= 8
            }
        }
        mutating func code(_ value: Int, _ bits: Int) {
            var reversed = 0
            for index in 0..<bits where value & (1 << index) != 0 { reversed |= 1 << (bits - 1 - index) }
            put(reversed, bits)
        }
        mutating func finish() -> [UInt8] {
            if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }
            return bytes
        }
    }

    static func literalCode(_ symbol: Int, _ writer: inout BitWriter) {
        switch symbol {
        case 0..<144: writer.code(0x30 + symbol, 8)
        case 144..<256: writer.code(0x190 + symbol - 144, 9)
        case 256..<280: writer.code(symbol - 256, 7)
        default: writer.code(0xC0 + symbol - 280, 8)
        }
    }

    /// One final fixed-Huffman block; matches of 3...258 bytes up to 256 bytes back.
    static func deflate(_ data: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        writer.put(1, 1)
        writer.put(1, 2)
        var index = 0
        while index < data.count {
            var bestLength = 0
            var bestDistance = 0
            for distance in 1...min(256, max(1, index)) where index >= distance {
                var length = 0
                while length < 258, index + length < data.count, data[index + length] == data[index - distance + length]
                {
                    length += 1
                }
                if length > bestLength {
                    bestLength = length
                    bestDistance = distance
                }
                if bestLength == 258 { break }
            }
            if bestLength >= 3 {
                lengthAndDistance(bestLength, bestDistance, &writer)
                index += bestLength
            } else {
                literalCode(Int(data[index]), &writer)
                index += 1
            }
        }
        literalCode(256, &writer)
        return writer.finish()
    }

    /// RFC 1951's length and distance codes: each code's base and its number of extra bits.
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

    static func lengthAndDistance(_ length: Int, _ distance: Int, _ writer: inout BitWriter) {
        let lengthIndex = Self.lengthBase.lastIndex { $0 <= length }!
        literalCode(257 + lengthIndex, &writer)
        writer.put(length - Self.lengthBase[lengthIndex], Self.lengthExtra[lengthIndex])
        let distanceIndex = Self.distanceBase.lastIndex { $0 <= distance }!
        writer.code(distanceIndex, 5)
        writer.put(distance - Self.distanceBase[distanceIndex], Self.distanceExtra[distanceIndex])
    }

    /// A stream of `count` zero bytes in a few bytes: a literal and then matches of 258 at distance 1.
    static func zeroBomb(_ count: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.put(1, 1)
        writer.put(1, 2)
        literalCode(0, &writer)
        var left = count - 1
        while left >= 258 {
            lengthAndDistance(258, 1, &writer)
            left -= 258
        }
        for _ in 0..<left { literalCode(0, &writer) }
        literalCode(256, &writer)
        return writer.finish()
    }

    /// An nRF Util package: manifest.json, application.dat and application.bin.
    static func dfuPackage(_ package: DFUPackage, deflate: Bool = true) -> TestZipWriter {
        var writer = TestZipWriter()
        writer.add("manifest.json", Array(TestZipFile.applicationManifest.utf8), deflate: deflate)
        writer.add("app.dat", package.initPacket, deflate: deflate)
        writer.add("app.bin", package.firmware, deflate: deflate)
        return writer
    }
}
