@testable import BeaconModel

/// Example frames built from the public specifications (iBeacon, AltBeacon, Eddystone, Exposure
/// Notification GAEN, Apple overflow as documented by its reverse engineers, Bluetooth Core HCI events).
/// `Tests/Fuzz/corpus` is seeded from these (see docs/decoding.md).
enum TestFrames {
    static let address = BluetoothAddress(string: "C0:FF:EE:00:11:22")!

    /// Flags + iBeacon: UUID e2c56db5-dffb-48d2-b060-d0f5a71096e0, major 1, minor 2, measured power -59.
    static let iBeacon = "020106 1aff4c00 0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5"
    /// AltBeacon spec example: company 0x0118, id 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 / 1 / 2, -59, reserved 0.
    static let altBeacon = "1bff1801 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5 00"
    /// Eddystone-UID: tx power at 0 m -18, namespace 00010203040506070809, instance 0a0b0c0d0e0f, 2 RFU bytes.
    static let eddystoneUID = "020106 0303aafe 1716aafe 00 ee 00010203040506070809 0a0b0c0d0e0f 0000"
    /// Eddystone-URL: tx -16, scheme 1 ("https://www."), "google" + 0x00 (".com/").
    static let eddystoneURL = "0303aafe 0d16aafe 10 f0 01 676f6f676c65 00"
    /// Eddystone-TLM plain: 3000 mV, 23.5 C, 1234 frames, 12345 (x0.1 s) uptime.
    static let eddystoneTLM = "0303aafe 1116aafe 20 00 0bb8 1780 000004d2 00003039"
    /// Eddystone-TLM plain, battery and temperature not supported (0 and 0x8000), negative temp variant below.
    static let eddystoneTLMUnsupported = "1116aafe 20 00 0000 8000 00000001 0000000a"
    static let eddystoneTLMNegative = "1116aafe 20 00 0e10 fe80 00000001 0000000a"
    /// Eddystone-TLM encrypted (version 1): 12 bytes ETLM, salt, MIC.
    static let eddystoneETLM = "1516aafe 20 01 a1a2a3a4a5a6a7a8a9aaabac 5a17 c0de"
    /// Eddystone-EID: tx -12, 8-byte ephemeral id.
    static let eddystoneEID = "0d16aafe 30 f4 1122334455667788"
    /// Exposure Notification: service list 0xFD6F, service data RPI (16 bytes) + 4 bytes metadata.
    static let exposureNotification = "03036ffd 17166ffd 000102030405060708090a0b0c0d0e0f 40080000"
    /// Apple overflow area: bits 0, 9 and 127 set.
    static let appleOverflow = "14ff4c00 01 80400000000000000000000000000001"
    /// Apple continuity (Nearby Info) noise: no beacon.
    static let appleNearby = "02011a 0aff4c00 1005 0b1c 7e2a8f"
    /// A device with a name, a 16-bit UUID list and unknown manufacturer data.
    static let plainDevice = "020106 04094b6974 03039ffe 05ff9900 0102"

    /// Legacy LE Advertising Report event with H4 byte and two reports (ADV_NONCONN_IND iBeacon at -60 dBm,
    /// SCAN_RSP with a name, RSSI 127 = not available).
    static var legacyTwoReports: [UInt8] {
        let first = DecodingFixtures.hex(iBeacon)
        let second = DecodingFixtures.hex("04094b6974")
        var params: [UInt8] = [0x02, 0x02]
        params += [0x03, 0x01] + address.littleEndianBytes + [UInt8(first.count)] + first + [0xC4]
        params += [0x04, 0x00] + [0x01, 0x02, 0x03, 0x04, 0x05, 0x06] + [UInt8(second.count)] + second + [0x7F]
        return [0x04, 0x3E, UInt8(params.count)] + params
    }

    /// LE Extended Advertising Report (no H4 byte): one complete extended report with TX power 127 and RSSI
    /// -70 carrying Eddystone-UID, SID 3.
    static var extendedReport: [UInt8] {
        extendedEvent(eventType: 0x0000, sid: 3, txPower: 0x7F, rssi: 0xBA, data: DecodingFixtures.hex(eddystoneUID))
    }

    static func extendedEvent(
        eventType: UInt16, sid: UInt8, txPower: UInt8, rssi: UInt8, data: [UInt8],
        address: BluetoothAddress = address
    ) -> [UInt8] {
        var params: [UInt8] = [0x0D, 0x01]
        params += [UInt8(eventType & 0xFF), UInt8(eventType >> 8), 0x01] + address.littleEndianBytes
        params += [0x01, 0x02, sid, txPower, rssi, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)
        params += [UInt8(data.count)] + data
        return [0x3E, UInt8(params.count)] + params
    }

    /// A legacy event (without H4) carrying one ADV_IND report with `data`.
    static func legacyEvent(_ data: [UInt8], rssi: UInt8 = 0xC0, address: BluetoothAddress = address) -> [UInt8] {
        let params: [UInt8] =
            [0x02, 0x01, 0x00, 0x01] + address.littleEndianBytes + [UInt8(data.count)] + data + [rssi]
        return [0x3E, UInt8(params.count)] + params
    }

    static let allAdvertisingPayloads: [(String, String)] = [
        ("ibeacon", iBeacon), ("altbeacon", altBeacon), ("eddystone-uid", eddystoneUID),
        ("eddystone-url", eddystoneURL), ("eddystone-tlm", eddystoneTLM), ("eddystone-etlm", eddystoneETLM),
        ("eddystone-eid", eddystoneEID), ("exposure-notification", exposureNotification),
        ("apple-overflow", appleOverflow), ("apple-nearby", appleNearby), ("device", plainDevice),
    ]
}
