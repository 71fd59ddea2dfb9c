import BeaconConfig
import BeaconConfigReading
import Foundation
import TestSupport
import Testing

@testable import YAMLConfig

/// Random mutations of a valid configuration must never trap, and every issue must carry a place.
@Suite(.ownThread) struct YAMLFuzzTests {
    static let seed = """
        gateway: {id: pi, room: kitchen}
        logging:
          level: info
        defaults: &d {rssi: -70, exit: 30s}
        regions:
          - <<: *d
            name: "desk \\u00e9"
            uuid: 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6
          - name: 'door'
            text: |
              literal
            folded: >
              text
        """

    static let fragments: [[UInt8]] = [
        "&a ", "*a", "<<: ", "!!binary ", "? ", "- ", "[", "]", "{", "}", ": ", "\n",
        "  ", "\t", "'", "\"", "---\n", "...\n", "%YAML 1.1\n", "#", "|", ">", ",",
        "\u{0}", "\u{FEFF}", "\\x", "!<tag:x>", "%TAG ! tag:a:\n",
    ].map { Array($0.utf8) }

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
    }

    /// The shipped example: every section's decoder sees mutated input.
    static func example() throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/beaconbridge.yaml")
        return Array(try Data(contentsOf: url))
    }

    @Test(arguments: [0, 1])
    func randomMutationsNeverTrap(seedIndex: Int) throws {
        var rng = Generator(state: 0x9E37_79B9_7F4A_7C15 &+ UInt64(seedIndex))
        let base = seedIndex == 0 ? Array(Self.seed.utf8) : try Self.example()
        var parsed = 0
        var rejected = 0
        for _ in 0..<(seedIndex == 0 ? 3000 : 1000) {
            var bytes = base
            for _ in 0...rng.next(6) {
                let at = rng.next(bytes.count + 1)
                switch rng.next(4) {
                case 0: if at < bytes.count { bytes.remove(at: at) }
                case 1: bytes.insert(contentsOf: Self.fragments[rng.next(Self.fragments.count)], at: at)
                case 2: if at < bytes.count { bytes[at] = UInt8(rng.next(256)) }
                default:
                    let end = min(bytes.count, at + rng.next(40))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                }
            }
            let doc = YAMLParser.parse(bytes, file: "fuzz.yaml")
            if doc.root == nil { rejected += 1 } else { parsed += 1 }
            #expect(doc.root != nil || !doc.issues.isEmpty)
            for issue in doc.issues { #expect(issue.file == "fuzz.yaml" && !issue.message.isEmpty) }
            if let root = doc.root {
                let (_, issues) = GatewayConfiguration.read(
                    root, file: "fuzz.yaml",
                    environment: ConfigEnvironment(hostname: "h"))
                for issue in issues { #expect(!issue.located.isEmpty) }
            }
        }
        #expect(parsed > 0 && rejected > 0)
    }
}
