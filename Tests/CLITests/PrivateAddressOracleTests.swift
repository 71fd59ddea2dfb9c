import BeaconFormats
import BeaconModel
import Foundation
import TestSupport
import Testing

/// Private address resolution against a reference implementation: the PyPI package `bluetooth-data-tools`
/// (what Home Assistant's `private_ble_device` uses), pinned in Tests/Oracles/bluetooth-data-tools.txt and
/// installed by scripts/reference-venv.sh into a cached virtual environment. Over generated addresses (our
/// own RPAs for each key in both byte orders, random addresses with every marker, the specification sample),
/// the oracle's verdict for each byte order must equal `IdentityResolvingKey.matches` and the resolver's answer.
/// Without PyPI the script prints a `SKIP:` line and this test records nothing.
@Suite struct PrivateAddressOracleTests {
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func resolutionAgreesWithBluetoothDataTools() async throws {
        let root = BuiltBinary.packageRoot
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bb-oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // The cached virtual environment (or a SKIP line).
        let venvOut = directory.appendingPathComponent("venv.out").path
        let setup = try ChildProcess(
            "/bin/bash", ["\(root)/scripts/reference-venv.sh", "\(root)/Tests/Oracles/bluetooth-data-tools.txt"],
            outputFiles: (venvOut, directory.appendingPathComponent("venv.err").path))
        #expect(await setup.exited(within: 600))
        let answer = (try String(contentsOfFile: venvOut, encoding: .utf8)).trimmingCharacters(
            in: .whitespacesAndNewlines)
        if answer.hasPrefix("SKIP:") || answer.isEmpty {
            print(answer.isEmpty ? "SKIP: bluetooth-data-tools reference: no virtual environment" : answer)
            return
        }

        // Cases: 64 keys; for each, 3 of our RPAs as written, 3 reversed, 6 random addresses of any kind.
        var random = Generator(state: 0x1157_0B1D)
        var keys: [(bytes: [UInt8], key: IdentityResolvingKey)] = []
        for _ in 0..<64 {
            let bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            keys.append((bytes, try #require(IdentityResolvingKey(bytes: bytes))))
        }
        let sample = [UInt8]([
            0xec, 0x02, 0x34, 0xa3, 0x57, 0xc8, 0xad, 0x05, 0x34, 0x10, 0x10, 0xa6, 0x0a, 0x39, 0x7d, 0x9b,
        ])
        keys.append((sample, try #require(IdentityResolvingKey(bytes: sample))))
        var cases: [(key: Int, address: BluetoothAddress)] = [
            (keys.count - 1, BluetoothAddress(string: "70:81:94:0D:FB:AA")!)
        ]
        for index in keys.indices {
            for order in KeyByteOrder.allCases {
                for _ in 0..<3 {
                    let prand = UInt32(truncatingIfNeeded: random.next())
                    cases.append((index, .resolvablePrivate(prand: prand, key: keys[index].key, order: order)))
                }
            }
            for _ in 0..<6 { cases.append((index, BluetoothAddress(rawValue: random.next()))) }
            // Another key's address: must not resolve with this one.
            cases.append((index, .resolvablePrivate(prand: 0x1234, key: keys[(index + 1) % keys.count].key)))
        }
        let input =
            cases.map { "\(Self.hex(keys[$0.key].bytes)) \($0.address.description)" }.joined(separator: "\n") + "\n"
        let inputPath = directory.appendingPathComponent("cases.txt").path
        let outputPath = directory.appendingPathComponent("verdicts.txt").path
        try input.write(toFile: inputPath, atomically: true, encoding: .utf8)
        let oracle = try ChildProcess(
            answer, ["\(root)/Tests/Oracles/resolve_private_addresses.py", inputPath, outputPath],
            outputFiles: (
                directory.appendingPathComponent("oracle.out").path,
                directory.appendingPathComponent("oracle.err").path
            ))
        #expect(await oracle.exited(within: 120))
        let verdicts = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        try #require(verdicts.count == cases.count)

        var resolvedByOracle = 0
        for (item, line) in zip(cases, verdicts) {
            let parts = line.split(separator: " ")
            try #require(parts.count == 3 && parts[0] == item.address.description)
            let written = parts[1] == "1"
            let reversed = parts[2] == "1"
            let key = keys[item.key].key
            #expect(key.matches(item.address, order: .asWritten) == written, "\(item.address) as written")
            #expect(key.matches(item.address, order: .reversed) == reversed, "\(item.address) reversed")
            var resolver = PrivateAddressResolver(keys: [key])
            let resolution = resolver.resolve(item.address, type: .randomDevice, at: 0)
            switch resolution {
            case .resolved(_, let order): #expect(order == .asWritten ? written : reversed && !written)
            case .unresolved: #expect(!written && !reversed)
            case .notPrivate: #expect(!written && !reversed && !item.address.isResolvablePrivate)
            }
            if written || reversed { resolvedByOracle += 1 }
        }
        // The sample and 6 generated RPAs per key resolve (a random address matching by chance is 2^-24).
        #expect(resolvedByOracle == 1 + keys.count * 6)
        print("bluetooth-data-tools oracle: \(cases.count) addresses, \(resolvedByOracle) resolved, all agree")
    }
}
