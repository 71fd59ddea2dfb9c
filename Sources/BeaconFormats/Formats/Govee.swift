import BeaconModel

/// Govee thermo-hygrometers: manufacturer data with company id 0xEC88 (as the devices send it).
///
/// - 6 bytes (H5072, H5075): `00`, a 24-bit big-endian value v (bit 23 = negative), battery byte (bit 7 = error).
///   Temperature = int(v' / 1000) / 10 °C and humidity = (v' mod 1000) / 10 % with v' = v without bit 23; a
///   reading outside -40..100 °C or with the error bit is left out (`sensor_error: true`).
/// - 7 bytes (H5074, in its scan responses) and 9 bytes (H5051 family): `00`, temperature s16 and humidity u16
///   little endian in 0.01 units, battery %.
/// Longer data that contains `INTELLI_ROCKS` has a 25-byte iBeacon body glued on, which is dropped first (as
/// govee-ble does). The beacon is identified by the sender's address.
enum Govee {
    static let companyID: UInt16 = 0xEC88
    package static let format = "govee"

    /// `bytes[payload]` is manufacturer data starting with the company code (88 ec).
    package static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        let base = payload.lowerBound + 2
        var count = payload.count - 2
        // Some firmware glues its 25-byte iBeacon body ("INTELLI_ROCKS_HW...") onto the readings: drop it.
        if count > 25, bytes[base..<(base + count)].firstRange(ofElements: intelliRocks) != nil { count -= 25 }
        var fields = [String: FieldValue](minimumCapacity: 5)
        switch count {
        case 6:
            let raw = Int(bytes[base + 1]) << 16 | Int(bytes[base + 2]) << 8 | Int(bytes[base + 3])
            let value = raw & 0x7F_FFFF
            let magnitude = Double(value / 1000) / 10
            let temperature = raw & 0x80_0000 != 0 ? -magnitude : magnitude
            let battery = bytes[base + 4]
            if battery & 0x80 == 0, temperature >= -40, temperature <= 100 {
                fields["temperature_c"] = .double(temperature)
                fields["humidity_pct"] = .double(Double(value % 1000) / 10)
            } else {
                fields["sensor_error"] = .bool(true)
            }
            fields["battery_pct"] = .int(Int64(battery & 0x7F))
            fields["model"] = .string("H5072/H5075")
        case 7, 9:
            let temperature = Int16(bitPattern: UInt16(bytes[base + 1]) | UInt16(bytes[base + 2]) << 8)
            let humidity = UInt16(bytes[base + 3]) | UInt16(bytes[base + 4]) << 8
            fields["temperature_c"] = .double(Double(temperature) / 100)
            fields["humidity_pct"] = .double(Double(humidity) / 100)
            fields["battery_pct"] = .int(Int64(bytes[base + 5]))
            fields["model"] = .string(count == 7 ? "H5074" : "H5051")
        default:
            return nil
        }
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: address), identifiers: [],
            measuredPower: nil, fields: fields, isExtraFrame: true)
    }

    static let intelliRocks = Array("INTELLI_ROCKS".utf8)
}

extension BeaconFormat {
    package static let govee = BeaconFormat(
        name: Govee.format, summary: "Govee thermo-hygrometers (H5072, H5075, H5074, H5051)", idShape: .address,
        fields: [
            Field("temperature_c", unit: "°C", .reading(deviceClass: "temperature"), "temperature"),
            Field("humidity_pct", unit: "%", .reading(deviceClass: "humidity"), "relative humidity"),
            Field("battery_pct", unit: "%", .reading(deviceClass: "battery"), "battery level"),
            Field(
                "sensor_error", .binary(deviceClass: "problem"), "the device flags its reading as invalid (H5072/H5075)"
            ),
            Field("model", .info, "H5072/H5075 (6 bytes), H5074 (7 bytes), H5051 (9 bytes)"),
        ],
        syntheticFrame: "020106 09ff88ec 00 03519e 64 00",
        quickCheck: .company(Govee.companyID, minimumLength: 8),
        decode: { Govee.beacon(in: $0.bytes, payload: $0.payload, address: $0.address) })
}
