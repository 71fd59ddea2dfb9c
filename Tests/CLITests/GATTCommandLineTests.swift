import BeaconConfigReading
import DeviceProtocols
import Testing

@testable import BeaconBridgeCLI

/// `beaconbridge gatt write`'s value is read as the configuration reads hexadecimal bytes (`HexBytes.parse`), plus
/// the empty value a characteristic may be written with, and at most ATT's 512 bytes.
@Suite struct GATTCommandLineTests {
    private func action(_ operands: [String]) -> GATTCommand.Action? {
        guard case .success(let options) = GATTCommand.parse(["--address", "00:AA:01:01:00:01"] + operands) else {
            return nil
        }
        return options.action
    }

    @Test(
        arguments: [
            ("cafe01", [0xCA, 0xFE, 0x01]), ("0xCAFE01", [0xCA, 0xFE, 0x01]), ("0Xca:fe:01", [0xCA, 0xFE, 0x01]),
            ("ca-fe-01", [0xCA, 0xFE, 0x01]), ("", []),
        ] as [(String, [UInt8])])
    func writeValuesInTheConfigurationsHexForms(text: String, bytes: [UInt8]) {
        let uuid = GATTUUID("6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10")!
        #expect(action(["write", uuid.description, text]) == .write(uuid, bytes, withResponse: true))
    }

    @Test(arguments: ["zz", "caf", "+f", "0x", String(repeating: "ab", count: 513)])
    func badWriteValuesAreUsageErrors(text: String) {
        guard case .failure(let failure) = GATTCommand.parse(["--address", "00:AA:01:01:00:01", "write", "2a06", text])
        else {
            Issue.record("'\(text.prefix(12))' was accepted")
            return
        }
        #expect(failure.message.contains("hex value"))
    }

    @Test func theLongestValueATTAllowsIsAccepted() {
        let text = String(repeating: "ab", count: 512)
        guard case .write(_, let bytes, _) = action(["write", "2a06", text]) else {
            Issue.record("512 bytes refused")
            return
        }
        #expect(bytes.count == 512)
    }
}
