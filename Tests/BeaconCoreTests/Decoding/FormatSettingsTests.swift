import Testing

@testable import BeaconFormats
@testable import BeaconModel

@Suite struct FormatSettingsTests {
    @Test func defaultsEnableEveryBuiltin() throws {
        let settings = FormatSettings()
        #expect(settings.validate().isEmpty)
        #expect(settings.enabledBuiltins == FormatRegistry.builtins)
        #expect(!settings.includeDevices)
        let decoder = try BeaconDecoder(settings: settings)
        #expect(decoder.builtins.count == FormatRegistry.builtins.count)
    }

    @Test func everyProblemIsReportedWithItsPath() {
        let settings = FormatSettings(
            enabled: ["ibeacon", "ibeacons"],
            layouts: [
                .init(name: "acme", layout: "m:2-3=0215,i:4-19"),
                .init(name: "ok", layout: "m:2-3=0215,i:4-19,i:20-zz"),
                .init(name: "acme", layout: "m:0-0=01,i:1-2"),
                .init(name: "Bad Name", layout: "m:0-0=01,i:1-2"),
                .init(name: "ibeacon", layout: "m:0-0=01,i:1-2"),
            ])
        let issues = settings.validate()
        #expect(
            issues.map(\.path) == [
                "formats.enabled[1]", "formats.layouts[1].layout", "formats.layouts[2].name",
                "formats.layouts[3].name", "formats.layouts[4].name",
            ])
        #expect(issues[1].message.contains("term 3 'i:20-zz'"))
    }

    @Test func decoderFromSettingsUsesTheLayouts() throws {
        let settings = FormatSettings(enabled: [], layouts: [.init(name: "acme", layout: "m:0-1=9900,i:2-3")])
        let decoder = try BeaconDecoder(settings: settings)
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0x10, isExtended: false, address: TestFrames.address,
            addressType: .publicDevice, rssi: -70, txPower: nil,
            data: DecodingFixtures.hex("05ff99000102") + DecodingFixtures.hex(TestFrames.iBeacon))
        #expect(decoder.decode(report).beacons.map(\.beaconID) == ["acme:258"])
        #expect(throws: LayoutError.self) {
            try BeaconDecoder(settings: FormatSettings(layouts: [.init(name: "x", layout: "m:0-0=zz")]))
        }
    }
}
