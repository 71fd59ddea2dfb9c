import BeaconModel

/// Ruuvi sensor tags: manufacturer data of Ruuvi Innovations (0x0499), data format 5 ("RAWv2", 24 bytes) or 3
/// ("RAWv1", 14 bytes), big endian (ruuvi-sensor-protocols `dataformat_05.md`, `dataformat_03.md`).
///
/// Every format-5 field has a "not available" value (temperature 0x8000, humidity and pressure 0xFFFF, any
/// acceleration axis 0x8000, battery 2047, tx power 31, movement 255, sequence 65535, MAC ff:ff:ff:ff:ff:ff);
/// such a field is left out. The beacon is identified by the MAC a format-5 frame carries, else the sender.
enum Ruuvi {
    static let companyID: UInt16 = 0x0499
    package static let format = "ruuvi"
    /// Standard gravity: mG to m/s².
    static let metresPerSecondSquaredPerMilliG = 0.009_806_65

    /// `bytes[payload]` is manufacturer data starting with the company code (99 04).
    package static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        let base = payload.lowerBound + 2
        guard payload.count >= 3 else { return nil }
        let count = payload.count - 2
        func u16(_ offset: Int) -> Int { Int(bytes[base + offset]) << 8 | Int(bytes[base + offset + 1]) }
        func s16(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(u16(offset)))) }
        var fields = [String: FieldValue](minimumCapacity: 14)
        var id = address
        switch bytes[base] {
        case 5:
            guard count == 24 else { return nil }
            let temperature = s16(1)
            let humidity = u16(3)
            let pressure = u16(5)
            if temperature != -32768 { fields["temperature_c"] = .double(Double(temperature) / 200) }
            if humidity != 0xFFFF { fields["humidity_pct"] = .double(Double(humidity) / 400) }
            if pressure != 0xFFFF { fields["pressure_hpa"] = .double(Double(pressure + 50_000) / 100) }
            acceleration(x: s16(7), y: s16(9), z: s16(11), into: &fields)
            let power = u16(13)
            if power >> 5 != 0x7FF { fields["battery_mv"] = .int(Int64(power >> 5 + 1600)) }
            if power & 0x1F != 0x1F { fields["tx_power_dbm"] = .int(Int64(-40 + 2 * (power & 0x1F))) }
            if bytes[base + 15] != 0xFF { fields["movement_counter"] = .int(Int64(bytes[base + 15])) }
            if u16(16) != 0xFFFF { fields["sequence"] = .int(Int64(u16(16))) }
            var mac: UInt64 = 0
            for index in 18..<24 { mac = mac << 8 | UInt64(bytes[base + index]) }
            if mac != 0xFFFF_FFFF_FFFF {
                id = BluetoothAddress(rawValue: mac)
                fields["mac"] = .string(id.description)
            }
        case 3:
            guard count == 14 else { return nil }
            let humidity = Int(bytes[base + 1])
            let whole = Int(bytes[base + 2])
            let hundredths = Int(bytes[base + 3])
            if humidity <= 200 { fields["humidity_pct"] = .double(Double(humidity) / 2) }
            if hundredths < 100 {
                let magnitude = Double((whole & 0x7F) * 100 + hundredths) / 100
                fields["temperature_c"] = .double(whole & 0x80 != 0 ? -magnitude : magnitude)
            }
            fields["pressure_hpa"] = .double(Double(u16(4) + 50_000) / 100)
            acceleration(x: s16(6), y: s16(8), z: s16(10), into: &fields)
            fields["battery_mv"] = .int(Int64(u16(12)))
        default:
            return nil
        }
        fields["data_format"] = .int(Int64(bytes[base]))
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: id), identifiers: [],
            measuredPower: nil, fields: fields, isExtraFrame: true)
    }

    /// Acceleration in m/s² per axis and in total (the raw values are mG); none when any axis is not available.
    static func acceleration(x: Int, y: Int, z: Int, into fields: inout [String: FieldValue]) {
        guard x != -32768, y != -32768, z != -32768 else { return }
        let factor = metresPerSecondSquaredPerMilliG
        fields["acceleration_x_ms2"] = .double(rounded(Double(x) * factor))
        fields["acceleration_y_ms2"] = .double(rounded(Double(y) * factor))
        fields["acceleration_z_ms2"] = .double(rounded(Double(z) * factor))
        fields["acceleration_total_ms2"] = .double(rounded(Double(x * x + y * y + z * z).squareRoot() * factor))
    }

    /// Four decimals (0.1 mG is below the sensors' resolution), so JSON does not carry float noise.
    package static func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }
}

extension BeaconFormat {
    package static let ruuvi = BeaconFormat(
        name: Ruuvi.format, summary: "Ruuvi tags, data formats 5 (RAWv2) and 3 (RAWv1)", idShape: .address,
        fields: [
            Field(
                "temperature_c", unit: "°C", .reading(deviceClass: "temperature"),
                "temperature (0.005 °C steps in format 5)"),
            Field("humidity_pct", unit: "%", .reading(deviceClass: "humidity"), "relative humidity"),
            Field("pressure_hpa", unit: "hPa", .reading(deviceClass: "pressure"), "air pressure"),
            Field("acceleration_x_ms2", unit: "m/s²", .reading(deviceClass: nil), "acceleration, x axis"),
            Field("acceleration_y_ms2", unit: "m/s²", .reading(deviceClass: nil), "acceleration, y axis"),
            Field("acceleration_z_ms2", unit: "m/s²", .reading(deviceClass: nil), "acceleration, z axis"),
            Field(
                "acceleration_total_ms2", unit: "m/s²", .reading(deviceClass: nil), "length of the acceleration vector"),
            Field("battery_mv", unit: "mV", .reading(deviceClass: "voltage"), "battery voltage"),
            Field("tx_power_dbm", unit: "dBm", .info, "transmit power (format 5)"),
            Field("movement_counter", .reading(deviceClass: nil), "movements detected, wraps at 255 (format 5)"),
            Field("sequence", .info, "measurement sequence number (format 5)"),
            Field("mac", .info, "the MAC address the frame carries (format 5)"),
            Field("data_format", .info, "3 or 5"),
        ],
        syntheticFrame: "020106 1bff9904 05 12fc 5394 c37c 0004 fffc 040c ac36 42 00cd cbb8334c884f",
        quickCheck: .company(Ruuvi.companyID, minimumLength: 3),
        decode: { Ruuvi.beacon(in: $0.bytes, payload: $0.payload, address: $0.address) })
}
