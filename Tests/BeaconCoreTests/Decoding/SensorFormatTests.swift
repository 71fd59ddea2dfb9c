import Testing

@testable import BeaconFormats
@testable import BeaconModel

/// Ruuvi and Govee frames: the Ruuvi protocol documents' vectors, the reference decoder's published frames, and
/// real Govee frames from the Android capture in Tests/Fixtures.
@Suite struct SensorFormatTests {
    static let address = BluetoothAddress(string: "C0:FF:EE:00:11:22")!

    func beacons(_ hex: String, keys: SensorKeys = SensorKeys()) -> [Beacon] {
        BeaconDecoder(keys: keys).decode(
            AdvertisingReport(
                timestamp: 1, eventType: 0x13, isExtended: false, address: Self.address, addressType: .publicDevice,
                rssi: -60, txPower: nil, data: DecodingFixtures.hex(hex))
        ).beacons
    }

    /// Manufacturer data AD structure of `company` (little endian) with `body` after the company code.
    static func manufacturer(_ company: UInt16, _ body: String) -> String {
        let bytes = DecodingFixtures.hex(body)
        return HexText.hex(
            [UInt8(bytes.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + bytes, 0..<(bytes.count + 4))
    }

    @Test func ruuviFormat5ValidVector() throws {
        // ruuvi-sensor-protocols dataformat_05.md, "valid data".
        let found = beacons(Self.manufacturer(0x0499, "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F"))
        let beacon = try #require(found.first)
        #expect(found.count == 1)
        #expect(beacon.format == "ruuvi")
        #expect(beacon.beaconID == "ruuvi:CB:B8:33:4C:88:4F")
        #expect(beacon.fields["temperature_c"] == .double(24.3))
        #expect(beacon.fields["humidity_pct"] == .double(53.49))
        #expect(beacon.fields["pressure_hpa"] == .double(1000.44))
        #expect(beacon.fields["acceleration_x_ms2"] == .double(0.0392))
        #expect(beacon.fields["acceleration_y_ms2"] == .double(-0.0392))
        #expect(beacon.fields["acceleration_z_ms2"] == .double(10.1597))
        #expect(beacon.fields["battery_mv"] == .int(2977))
        #expect(beacon.fields["tx_power_dbm"] == .int(4))
        #expect(beacon.fields["movement_counter"] == .int(66))
        #expect(beacon.fields["sequence"] == .int(205))
        #expect(beacon.fields["mac"] == .string("CB:B8:33:4C:88:4F"))
        #expect(beacon.fields["data_format"] == .int(5))
    }

    @Test func ruuviFormat5NotAvailableSentinels() throws {
        // dataformat_05.md, "invalid values": every field at its "not available" value.
        let beacon = try #require(
            beacons(Self.manufacturer(0x0499, "058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF")).first)
        #expect(beacon.fields == ["data_format": .int(5)])
        #expect(beacon.beaconID == "ruuvi:C0:FF:EE:00:11:22")  // no MAC in the frame: the sender's address
        // Minimum values (dataformat_05.md): -163.835 °C, 0 %, 500 hPa, -32767 mG, 1600 mV, -40 dBm.
        let minimum = try #require(
            beacons(Self.manufacturer(0x0499, "058001000000008001800180010000000000CBB8334C884F")).first)
        #expect(minimum.fields["temperature_c"] == .double(-163.835))
        #expect(minimum.fields["humidity_pct"] == .double(0))
        #expect(minimum.fields["pressure_hpa"] == .double(500))
        #expect(minimum.fields["battery_mv"] == .int(1600))
        #expect(minimum.fields["tx_power_dbm"] == .int(-40))
    }

    @Test func ruuviFormat3() throws {
        // ruuvitag-ble's published test frames (tests/test_v3.py).
        let beacon = try #require(beacons(Self.manufacturer(0x0499, "03b20c1fca20007a002603d0088f")).first)
        #expect(beacon.fields["temperature_c"] == .double(12.31))
        #expect(beacon.fields["humidity_pct"] == .double(89))
        #expect(beacon.fields["pressure_hpa"] == .double(1017.44))
        #expect(beacon.fields["battery_mv"] == .int(2191))
        let subzero = try #require(beacons(Self.manufacturer(0x0499, "03b28145ca20007a002603d0088f")).first)
        #expect(subzero.fields["temperature_c"] == .double(-1.69))
    }

    @Test(arguments: [
        "05", "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C88", "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F00",
        "03b20c1fca20007a002603d008", "06170c5668c79e007000c90501d9ff", "e1",
    ])
    func ruuviRejectsOtherLengthsAndFormats(body: String) {
        #expect(beacons(Self.manufacturer(0x0499, body)).isEmpty)
    }

    @Test func goveeH5072FromTheAndroidCapture() throws {
        // Record 133 of Tests/Fixtures/android-horizon74-btsnoop.log: GVH5072_6FAB.
        let found = beacons("0d09475648353037325f36464142030388ec02010509ff88ec0002d0174200")
        let beacon = try #require(found.first)
        #expect(found.count == 1)
        #expect(beacon.beaconID == "govee:C0:FF:EE:00:11:22")
        #expect(
            beacon.fields == [
                "temperature_c": .double(18.4), "humidity_pct": .double(34.3),
                "battery_pct": .int(66), "model": .string("H5072/H5075"),
            ])
    }

    @Test func goveeNegativeTemperatureAndError() throws {
        // 0x80c47f: negative flag + 50303 -> -5.0 °C, 30.3 %.
        let cold = try #require(beacons(Self.manufacturer(0xEC88, "0080c47f6400")).first)
        #expect(cold.fields["temperature_c"] == .double(-5.0))
        #expect(cold.fields["humidity_pct"] == .double(30.3))
        #expect(cold.fields["battery_pct"] == .int(100))
        // Error bit in the battery byte: no reading, the error flagged.
        let broken = try #require(beacons(Self.manufacturer(0xEC88, "0080c47fe400")).first)
        #expect(
            broken.fields == ["sensor_error": .bool(true), "battery_pct": .int(100), "model": .string("H5072/H5075")])
        // Out of range (120.0 °C): no reading either.
        let hot = try #require(beacons(Self.manufacturer(0xEC88, "00124f806400")).first)
        #expect(hot.fields["temperature_c"] == nil && hot.fields["sensor_error"] == .bool(true))
    }

    @Test func goveeH5074InAScanResponse() throws {
        // H5074 scan response: temperature 0x0a06 = 25.66 °C, humidity 0x1572 = 54.90 %, battery 100 %.
        let report = AdvertisingReport(
            timestamp: 1, eventType: 0x1B, isExtended: false, address: Self.address,
            addressType: .publicDevice, rssi: -70, txPower: nil,
            data: DecodingFixtures.hex(Self.manufacturer(0xEC88, "00060a72156402")))
        let beacon = try #require(BeaconDecoder().decode(report).beacons.first)
        #expect(
            beacon.fields == [
                "temperature_c": .double(25.66), "humidity_pct": .double(54.9),
                "battery_pct": .int(100), "model": .string("H5074"),
            ])
        let negative = try #require(beacons(Self.manufacturer(0xEC88, "0018fc72156402")).first)
        #expect(negative.fields["temperature_c"] == .double(-10))
    }

    @Test(arguments: ["00", "0002d01742", "0002d017420000000000"])
    func goveeRejectsOtherLengths(body: String) {
        #expect(beacons(Self.manufacturer(0xEC88, body)).isEmpty)
    }

    @Test func everyRegisteredFormatDecodesItsSyntheticFrame() throws {
        for format in FormatRegistry.builtins {
            let found = beacons(HexText.hex(format.syntheticFrame, 0..<format.syntheticFrame.count))
            #expect(found.map(\.format) == [format.name], "\(format.name)")
            for name in (found.first?.fields ?? [:]).keys {
                #expect(format.field(named: name) != nil, "\(format.name): field \(name) is not in the registry")
            }
        }
        #expect(Set(FormatRegistry.names).count == FormatRegistry.names.count)
    }
}
