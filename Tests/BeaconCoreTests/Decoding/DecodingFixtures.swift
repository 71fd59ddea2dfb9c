#if canImport(Glibc)
import Glibc
#endif

/// Test input: hex frames and the real capture under Tests/Fixtures, located from this file's path.
enum DecodingFixtures {
    static func packageRoot(_ file: String = #filePath) -> String {
        var parts = file.split(separator: "/", omittingEmptySubsequences: false)
        while let last = parts.last, last != "Tests" { parts.removeLast() }
        parts.removeLast()
        return parts.joined(separator: "/")
    }

    static var capturePath: String { packageRoot() + "/Tests/Fixtures/android-horizon74-btsnoop.log" }

    /// Reads a whole file with plain libc calls (the core under test does no I/O itself).
    static func readFile(_ path: String) -> [UInt8]? {
        guard let handle = fopen(path, "rb") else { return nil }
        defer { fclose(handle) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, 65536, handle) }
            if count <= 0 { break }
            out.append(contentsOf: chunk[0..<count])
        }
        return out
    }

    static var capture: [UInt8] { readFile(capturePath) ?? [] }

    /// "02 01 06" / "020106" -> bytes; nil on odd length or a non-hex digit.
    static func hex(_ text: String) -> [UInt8] {
        let digits = text.filter { !$0.isWhitespace }
        var out: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2, limitedBy: digits.endIndex) ?? digits.endIndex
            out.append(UInt8(digits[index..<next], radix: 16) ?? 0xEE)
            index = next
        }
        return out
    }
}
