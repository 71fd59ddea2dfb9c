import BeaconConfigReading
import BeaconFormats
import BeaconModel

/// Builds the AD payload a real beacon would send for an observation of a built-in format, so simulated
/// observations can be turned back into radio bytes (`AdvertisingReportEncoder`).
public enum SyntheticAdvertisement {
    /// AD bytes for `ibeacon` (identifiers: uuid, major, minor), `altbeacon` (id1 16-byte UUID, id2, id3) and
    /// `eddystone-uid` (identifiers: 0x-hex namespace, 0x-hex instance), the registry's synthetic frame for
    /// sensor formats identified by their sender (`ruuvi`, `govee`, `bthome`). Nil for other formats or
    /// identifiers that do not parse.
    public static func payload(for observation: Observation) -> [UInt8]? {
        let power = Int8(clamping: observation.measuredPower ?? -59)
        let ids = observation.identifiers
        switch observation.format {
        case "ibeacon", "altbeacon":
            guard ids.count == 3, let uuid = uuidBytes(ids[0]), let major = UInt16(ids[1]), let minor = UInt16(ids[2])
            else { return nil }
            var mfg: [UInt8] = observation.format == "ibeacon" ? [0x4C, 0x00, 0x02, 0x15] : [0x18, 0x01, 0xBE, 0xAC]
            mfg += uuid + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
            mfg.append(UInt8(bitPattern: power))
            if observation.format == "altbeacon" { mfg.append(0x00) }
            return [0x02, 0x01, 0x06, UInt8(mfg.count + 1), 0xFF] + mfg
        case "eddystone-uid":
            guard ids.count == 2, let namespace = HexBytes.parse(ids[0]), namespace.count == 10,
                let instance = HexBytes.parse(ids[1]), instance.count == 6
            else { return nil }
            // Eddystone UID carries the power at 0 m: about 41 dB above the power at 1 m.
            let service: [UInt8] =
                [0xAA, 0xFE, 0x00, UInt8(bitPattern: Int8(clamping: Int(power) + 41))]
                + namespace + instance + [0x00, 0x00]
            return [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(service.count + 1), 0x16] + service
        case BeaconFormat.ruuvi.name, BeaconFormat.govee.name, BeaconFormat.bthome.name:
            // Sensors identified by their sender: the registry's frame, sent from the observation's address.
            return FormatRegistry.format(named: observation.format)?.syntheticFrame
        default:
            return nil
        }
    }

    /// An advertising report carrying the observation's payload, address, RSSI and time.
    public static func report(for observation: Observation) -> AdvertisingReport? {
        guard let data = payload(for: observation) else { return nil }
        return AdvertisingReport(
            timestamp: observation.timestamp, eventType: 0x10, isExtended: false,
            address: observation.address, addressType: observation.addressType,
            rssi: observation.rssi.map { Int8(clamping: $0) }, txPower: nil, data: data)
    }

    static func uuidBytes(_ text: String) -> [UInt8]? {
        let bytes = HexBytes.parse(text)
        return bytes?.count == 16 ? bytes : nil
    }
}
