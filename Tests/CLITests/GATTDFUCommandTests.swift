import BeaconModel
import Foundation
import TestSupport
import Testing

/// `beaconbridge gatt dfu`: a package that cannot be sent is refused before any connection (the adapter named
/// does not exist, so any connection attempt would end with 69 instead).
@Suite struct GATTDFUCommandTests {
    static let arguments = ["gatt", "--address", "AA:BB:CC:DD:EE:FF", "--adapter", "hci9", "dfu", "--package"]

    @Test func aFileThatIsNotAZipExits65BeforeConnecting() async throws {
        let path = NSTemporaryDirectory() + "bb-dfu-\(getpid())-text.zip"
        try "firmware, honestly\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await BuiltBinary.run(Self.arguments + [path], timeout: 60)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("validatePackage: package refused: not a zip file"))
        #expect(!run.stderr.contains("connecting"))
    }

    @Test func aZipWithoutAManifestExits65AndAMissingFile66() async throws {
        // Made by Python's zipfile: one deflated entry, text.txt.
        let hex =
            "504b0304140000000800ce70855d6d72a64572000000c00d000008000000746578742e747874edcc490e82401445d1adbc15"
            + "1854c4665821eec00514f0c1a2a98f4561b77a0c6b70f82677729363c496ea4d705523c8af370cd6bb5aa688f8cb05f12e78"
            + "ccaeec50047d79d4fa463b0fe3047d4a58776fbf1f54da20d9eef6e9213b9ece1b18ba74e9d2a54b972e5dba74e9d2a5fb57"
            + "7701504b01021403140000000800ce70855d6d72a64572000000c00d00000800000000000000000000008001000000007465"
            + "78742e747874504b0506000000000100010036000000980000000000"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        let path = NSTemporaryDirectory() + "bb-dfu-\(getpid())-nomanifest.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await BuiltBinary.run(Self.arguments + [path], timeout: 60)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("manifest.json: not in the zip file"))
        let missing = try await BuiltBinary.run(Self.arguments + [path + ".absent"], timeout: 60)
        #expect(missing.status == 66, "stderr: \(missing.stderr)")
        let usage = try await BuiltBinary.run(
            ["gatt", "--address", "AA:BB:CC:DD:EE:FF", "dfu"], timeout: 60)
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("dfu needs --package FILE.zip"))
    }
}
