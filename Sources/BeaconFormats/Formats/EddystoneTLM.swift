import BeaconModel

/// Eddystone-TLM frames (service data 0xFEAA, frame type 0x20). Version 0 is plain telemetry, version 1
/// encrypted (ETLM: 12 encrypted bytes, 2-byte salt, 2-byte MIC). TLM carries no identity: the beacon is
/// identified by the sending device's address (the same device usually sends UID or EID frames too).
enum EddystoneTLM {
    static let frameType: UInt8 = 0x20

    /// True when the service data at `base` starts with the Eddystone UUID 0xFEAA (little endian: aa fe).
    @inline(__always)
    static func isEddystone(_ bytes: [UInt8], _ base: Int) -> Bool {
        base >= 0 && base + 1 < bytes.count && bytes[base] == 0xAA && bytes[base + 1] == 0xFE
    }

    /// `bytes[payload]` is the service data starting with the UUID (aa fe).
    package static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        let base = payload.lowerBound
        guard payload.count >= 4, isEddystone(bytes, base), bytes[base + 2] == frameType else { return nil }
        var fields = [String: FieldValue](minimumCapacity: 6)
        switch bytes[base + 3] {
        case 0x00:
            guard payload.count >= 16 else { return nil }
            let battery = HexText.unsigned(bytes, (base + 4)..<(base + 6))
            let temperature = UInt16(HexText.unsigned(bytes, (base + 6)..<(base + 8)))
            let advCount = HexText.unsigned(bytes, (base + 8)..<(base + 12))
            let uptime = HexText.unsigned(bytes, (base + 12)..<(base + 16))
            if battery != 0 { fields["battery_mv"] = .int(Int64(battery)) }
            if temperature != 0x8000 { fields["temperature_c"] = .double(Double(Int16(bitPattern: temperature)) / 256) }
            fields["adv_count"] = .int(Int64(advCount))
            fields["uptime_s"] = .double(Double(uptime) / 10)
            fields["encrypted"] = .bool(false)
        case 0x01:
            guard payload.count >= 20 else { return nil }
            fields["encrypted"] = .bool(true)
            fields["etlm"] = .string(HexText.hex(bytes, (base + 4)..<(base + 16)))
            fields["salt"] = .string(HexText.hex(bytes, (base + 16)..<(base + 18)))
            fields["mic"] = .string(HexText.hex(bytes, (base + 18)..<(base + 20)))
        default:
            return nil
        }
        fields["tlm_version"] = .int(Int64(bytes[base + 3]))
        let format = "eddystone-tlm"
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: address),
            identifiers: [], measuredPower: nil, fields: fields, isExtraFrame: true)
    }
}

extension BeaconFormat {
    static let eddystoneTLM = BeaconFormat(
        name: "eddystone-tlm", summary: "Eddystone-TLM (plain and encrypted telemetry)", idShape: .address,
        fields: [
            Field(
                "battery_mv", unit: "mV", .reading(deviceClass: "voltage"),
                "battery voltage (left out when 0 = not supported)"),
            Field(
                "temperature_c", unit: "°C", .reading(deviceClass: "temperature"),
                "beacon temperature, signed 8.8 (left out when 0x8000)"),
            Field("adv_count", .info, "advertising PDUs sent since power-up"),
            Field("uptime_s", unit: "s", .info, "time since power-up (0.1 s resolution)"),
            Field("encrypted", .info, "true for ETLM (version 1)"),
            Field("tlm_version", .info, "0 plain, 1 encrypted"),
            Field("etlm", .info, "encrypted telemetry, 12 bytes hex"),
            Field("salt", .info, "ETLM salt, hex"),
            Field("mic", .info, "ETLM message integrity check, hex"),
        ],
        syntheticFrame: "0303aafe 1116aafe 20 00 0bb8 1780 000004d2 00003039",
        quickCheck: QuickCheck(
            adType: 0x16, offset1: 0, byte1: 0xAA, offset2: 2, byte2: EddystoneTLM.frameType, minimumLength: 4),
        decode: { EddystoneTLM.beacon(in: $0.bytes, payload: $0.payload, address: $0.address) })
}
