import Testing

@testable import BeaconModel
@testable import BeaconTracking

@Suite struct RegionMatchTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let address = BluetoothAddress(string: "AA:BB:CC:DD:EE:01")!

    /// Matches with the public rule and with the engine's compiled form, which must agree.
    func matches(
        _ match: RegionMatch, format: String = "ibeacon", ids: [String], name: String? = nil,
        address: BluetoothAddress = RegionMatchTests.address
    ) -> Bool {
        let result = match.matches(format: format, identifiers: ids, address: address, name: name)
        let subject = CompiledRegionMatch.Subject(format: format, identifiers: ids, address: address, name: name)
        #expect(CompiledRegionMatch(match).matches(subject) == result, "compiled match disagrees for \(match)")
        return result
    }

    @Test func iBeaconRegionsAsOnIOS() {
        let ids = [Self.uuid.lowercased(), "1", "7"]
        #expect(matches(.iBeacon(uuid: Self.uuid), ids: ids))
        #expect(matches(.iBeacon(uuid: Self.uuid, major: 1), ids: ids))
        #expect(matches(.iBeacon(uuid: Self.uuid, major: 1, minor: 7), ids: ids))
        #expect(!matches(.iBeacon(uuid: Self.uuid, major: 2), ids: ids))
        #expect(!matches(.iBeacon(uuid: Self.uuid, major: 1, minor: 8), ids: ids))
        #expect(!matches(.iBeacon(uuid: "00000000-0000-0000-0000-000000000000"), ids: ids))
        #expect(!matches(.iBeacon(uuid: Self.uuid), format: "altbeacon", ids: ids))
    }

    @Test func wildcardsAndDecimalValues() {
        let ids = [Self.uuid, "1", "7"]
        #expect(matches(RegionMatch(format: "*", identifiers: ["*", nil, "07"]), ids: ids))
        #expect(matches(RegionMatch(identifiers: [nil, "1"]), format: "anything", ids: ids))
        #expect(!matches(RegionMatch(identifiers: ["*", "*", "*", "x"]), ids: ids), "a pattern longer than the ids")
    }

    @Test func eddystoneNamespaceAndOrInstance() {
        let ids = ["0xedd1ebeac04e5defa017", "0x0123456789ab"]
        #expect(matches(.eddystone(namespace: "EDD1EBEAC04E5DEFA017"), format: "eddystone-uid", ids: ids))
        #expect(matches(.eddystone(instance: "0123456789AB"), format: "eddystone-uid", ids: ids))
        #expect(
            matches(
                .eddystone(namespace: "0xedd1ebeac04e5defa017", instance: "0x0123456789ab"),
                format: "eddystone-uid", ids: ids))
        #expect(!matches(.eddystone(instance: "0x0123456789ac"), format: "eddystone-uid", ids: ids))
    }

    @Test func layoutIdentifiersByPosition() {
        let match = RegionMatch(format: "my-tag", identifiers: [nil, "0x0042"])
        #expect(matches(match, format: "my-tag", ids: ["0x01", "0x0042"]))
        #expect(!matches(match, format: "my-tag", ids: ["0x01", "0x0043"]))
    }

    @Test func addressAndNamePattern() {
        #expect(matches(RegionMatch(address: Self.address), format: "device", ids: []))
        #expect(!matches(RegionMatch(address: BluetoothAddress(rawValue: 1)), format: "device", ids: []))
        let named = RegionMatch(namePattern: "Tile*")
        #expect(matches(named, format: "device", ids: [], name: "Tile Mate"))
        #expect(!matches(named, format: "device", ids: [], name: "My Tile"))
        #expect(!matches(named, format: "device", ids: [], name: nil))
    }

    @Test(arguments: [
        ("*", "", true), ("*", "abc", true), ("a*c", "abbbc", true), ("a*c", "abcd", false),
        ("*phone*", "Jo's iphone 12", true), ("Pixel ?", "Pixel 7", false), ("a**b", "ab", true), ("abc", "abc", true),
    ])
    func glob(pattern: String, text: String, expected: Bool) {
        #expect(RegionMatch.glob(pattern, matches: text) == expected)
    }
}
