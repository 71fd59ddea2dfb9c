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
    static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
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
        let format = BuiltinFormat.eddystoneTLM.rawValue
        return Beacon(format: format, beaconID: Beacon.addressID(format: format, address: address),
                      identifiers: [], measuredPower: nil, fields: fields, isExtraFrame: true)
    }
}
