import TestSupport
import Testing

@testable import SecureDFU

@Suite(.ownThread) struct DFUPackageArchiveTests {
    /// A zip made by Python's zipfile (zlib, a dynamic-Huffman block): `text.txt`, 3,520 bytes, CRC 0x45a6726d.
    static let pythonZip = DecodingFixtures.hex(
        "504b0304140000000800ce70855d6d72a64572000000c00d000008000000746578742e747874edcc490e82401445d1adbc15"
            + "1854c4665821eec00514f0c1a2a98f4561b77a0c6b70f82677729363c496ea4d705523c8af370cd6bb5aa688f8cb05f12e78"
            + "ccaeec50047d79d4fa463b0fe3047d4a58776fbf1f54da20d9eef6e9213b9ece1b18ba74e9d2a54b972e5dba74e9d2a5fb57"
            + "7701504b01021403140000000800ce70855d6d72a64572000000c00d00000800000000000000000000008001000000007465"
            + "78742e747874504b0506000000000100010036000000980000000000")

    static func problems(_ bytes: [UInt8]) -> [DFUPackageProblem] {
        do throws(DFUError) {
            _ = try DFUPackageArchive(zip: bytes)
            return []
        } catch {
            guard case .invalidPackage(.validatePackage, let problems) = error else { return [] }
            return problems
        }
    }

    @Test func readsAZipMadeByPythonsZipfile() throws {
        let archive = try ZipArchive(Self.pythonZip)
        #expect(archive.entries.map(\.name) == ["text.txt"])
        let text = try archive.contents(of: "text.txt")
        #expect(text.count == 3_520)
        #expect(CRC32.checksum(text) == 0x45A6_726D)
        #expect(String(decoding: text.prefix(12), as: UTF8.self) == "BeaconBridge")
    }

    @Test(arguments: [true, false]) func readsAnNRFUtilPackage(_ deflate: Bool) throws {
        let package = DFUTestPackages.package(size: 12_000, version: 5)
        let bytes = TestZipWriter.dfuPackage(package, deflate: deflate).bytes()
        let archive = try DFUPackageArchive(zip: bytes)
        #expect(archive.images.count == 1)
        let image = try #require(archive.images.first)
        #expect(image.kind == "application")
        #expect(image.firmwareFile == "app.bin")
        #expect(image.package == package)
        #expect(image.package.firmwareVersion == 5)
        #expect(image.package.problems() == [])
    }

    @Test func inflatesRepetitiveDataWithLongMatches() throws {
        let data = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 / 7 % 5) } + Array("tail".utf8)
        let compressed = TestZipWriter.deflate(data)
        #expect(compressed.count < data.count / 10)
        #expect(try Inflate.decompress(compressed, limit: data.count) == data)
        #expect(throws: Inflate.Failure.self) { try Inflate.decompress(compressed, limit: data.count - 1) }
    }

    @Test func aCorruptEntryIsNamedWithItsCRC() throws {
        let package = DFUTestPackages.package(size: 4_000, version: 5)
        var writer = TestZipWriter.dfuPackage(package)
        writer.entries[2].statedCRC = 0xDEAD_BEEF
        #expect(
            Self.problems(writer.bytes())
                == [.entryCRCMismatch("app.bin", expected: 0xDEAD_BEEF, actual: package.firmwareCRC32)])
        // A flipped byte inside stored data: the CRC catches it.
        var stored = TestZipWriter.dfuPackage(package, deflate: false).bytes()
        stored[stored.count / 2] ^= 0x01
        let problems = Self.problems(stored)
        #expect(problems.count == 1)
        guard case .entryCRCMismatch("app.bin", _, _)? = problems.first else {
            Issue.record("expected a CRC mismatch naming app.bin, got \(problems)")
            return
        }
    }

    @Test func aZipBombStopsAtTheStatedSizeOrTheLimits() {
        // 50 MB of zeros in a few KB, stated as 1,000 bytes: inflation stops at 1,000.
        var lying = TestZipWriter()
        lying.entries.append(
            .init(
                name: "bomb.bin", data: [], statedCRC: 0, statedSize: 1_000,
                rawCompressed: TestZipWriter.zeroBomb(50_000_000)))
        let problems = Self.problems(lying.bytes())
        // And, as this archive is no DFU package, its manifest is missing.
        #expect(problems.count == 2)
        #expect(problems.last == .manifestInvalid("not in the zip file (is this an nRF Util DFU package?)"))
        guard case .entryCorrupt("bomb.bin", let reason)? = problems.first else {
            Issue.record("expected bomb.bin to be corrupt, got \(problems)")
            return
        }
        #expect(reason.contains("exceeds 1000 bytes"))
        // Stated honestly, it is refused before any inflation.
        var honest = TestZipWriter()
        honest.entries.append(
            .init(name: "bomb.bin", data: [], statedSize: 50_000_000, rawCompressed: TestZipWriter.zeroBomb(50_000_000))
        )
        #expect(
            Self.problems(honest.bytes()) == [
                .archiveTooLarge("entry bomb.bin inflates to 50000000 bytes, at most 2097152")
            ])
        // Many entries each under the entry limit but over the total.
        var many = TestZipWriter()
        for index in 0..<3 {
            many.entries.append(
                .init(name: "part\(index)", data: [], statedSize: 2 << 20, rawCompressed: [0x03, 0x00]))
        }
        #expect(Self.problems(many.bytes()) == [.archiveTooLarge("the entries inflate to more than 4194304 bytes")])
        var crowded = TestZipWriter()
        for index in 0..<65 { crowded.add("f\(index)", [UInt8(index)]) }
        #expect(Self.problems(crowded.bytes()) == [.archiveTooLarge("65 entries, at most 64")])
    }

    @Test func aCutOrOverlongDeflateStreamIsCorruptNamingTheEntry() {
        let package = DFUTestPackages.package(size: 3_000, version: 5)
        let stream = TestZipWriter.deflate(package.firmware)
        for (compressed, expected) in [
            (Array(stream.dropLast(40)), "the stream ends early"),
            (stream + [0x00, 0x2A], "2 bytes after the end of the stream"),
            ([0xFF] + stream, "invalid block type"),
        ] {
            var writer = TestZipWriter.dfuPackage(package)
            writer.entries[2].rawCompressed = compressed
            let problems = Self.problems(writer.bytes())
            guard problems.count == 1, case .entryCorrupt("app.bin", let reason)? = problems.first else {
                Issue.record("expected app.bin to be corrupt, got \(problems)")
                continue
            }
            #expect(reason.hasPrefix("deflate: \(expected)"), "\(reason)")
        }
    }

    @Test func aMissingManifestOrEntryIsNamed() {
        let package = DFUTestPackages.package(size: 2_000, version: 5)
        var noManifest = TestZipWriter.dfuPackage(package)
        noManifest.entries.removeFirst()
        #expect(
            Self.problems(noManifest.bytes())
                == [.manifestInvalid("not in the zip file (is this an nRF Util DFU package?)")])
        var noImage = TestZipWriter.dfuPackage(package)
        noImage.entries.removeLast()
        #expect(Self.problems(noImage.bytes()) == [.entryMissing("app.bin")])
        var badManifest = TestZipWriter.dfuPackage(package)
        badManifest.entries[0].data = Array(#"{"manifest": {"application": {"bin_file": 3}}}"#.utf8)
        #expect(
            Self.problems(badManifest.bytes())
                == [.manifestInvalid("application needs \"dat_file\" and \"bin_file\" strings")])
        var notJSON = TestZipWriter.dfuPackage(package)
        notJSON.entries[0].data = Array("manifest".utf8)
        guard case .manifestInvalid(let reason)? = Self.problems(notJSON.bytes()).first else {
            Issue.record("expected an invalid manifest")
            return
        }
        #expect(reason.contains("invalid JSON"))
    }

    @Test func notAZipAndTruncationsNeverTrap() {
        #expect(
            Self.problems(Array("hello, this is a text file and not a zip at all".utf8)) == [
                .notAnArchive("no end of central directory record")
            ])
        #expect(Self.problems([1, 2, 3]) == [.notAnArchive("3 bytes is too short for a zip")])
        let bytes = TestZipWriter.dfuPackage(DFUTestPackages.package(size: 3_000, version: 5)).bytes()
        var refused = 0
        for length in stride(from: 0, to: bytes.count, by: 7) where !Self.problems(Array(bytes.prefix(length))).isEmpty
        {
            refused += 1
        }
        #expect(refused == (bytes.count + 6) / 7)
        var generator = SeededGenerator(seed: 31)
        for _ in 0..<300 {
            var noisy = bytes
            for _ in 0..<4 {
                noisy[Int.random(in: 0..<noisy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = Self.problems(noisy)
            let random = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? Inflate.decompress(random, limit: 100_000)
        }
    }
}
