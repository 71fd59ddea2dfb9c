import BeaconModel

/// Eddystone-URL frames (service data 0xFEAA, frame type 0x10): TX power at 0 m, URL scheme prefix,
/// encoded URL with expansion codes. The beacon is identified by its device address; the URL is a field.
enum EddystoneURL {
    static let frameType: UInt8 = 0x10
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// `bytes[payload]` is the service data starting with the UUID (aa fe).
    package static func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        let base = payload.lowerBound
        guard payload.count >= 5, payload.count <= 4 + 18, EddystoneTLM.isEddystone(bytes, base),
            bytes[base + 2] == frameType,
            let url = expand(bytes, (base + 4)..<payload.upperBound)
        else { return nil }
        let txPower = Int(Int8(bitPattern: bytes[base + 3]))
        let format = "eddystone-url"
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: address),
            identifiers: [url], measuredPower: txPower - 41,
            fields: ["url": .string(url), "tx_power_0m": .int(Int64(txPower))], isExtraFrame: true)
    }

    /// Scheme byte then encoded characters; nil for an unknown scheme or a reserved byte.
    static func expand(_ bytes: [UInt8], _ range: Range<Int>) -> String? {
        guard let first = range.first, Int(bytes[first]) < schemes.count else { return nil }
        var url = schemes[Int(bytes[first])]
        for index in range.dropFirst() {
            let byte = bytes[index]
            switch byte {
            case 0x00...0x0D: url += expansions[Int(byte)]
            case 0x21...0x7E: url.unicodeScalars.append(Unicode.Scalar(byte))
            default: return nil
            }
        }
        return url
    }
}

extension BeaconFormat {
    static let eddystoneURL = BeaconFormat(
        name: "eddystone-url", summary: "Eddystone-URL", idShape: .address,
        fields: [
            Field("url", .info, "the expanded URL (also the only identifier)"),
            Field("tx_power_0m", unit: "dBm", .info, "transmit power at 0 m as sent (measured power is this - 41)"),
        ],
        syntheticFrame: "0303aafe 0d16aafe 10 f0 01 676f6f676c65 00",
        quickCheck: QuickCheck(
            adType: 0x16, offset1: 0, byte1: 0xAA, offset2: 2, byte2: EddystoneURL.frameType, minimumLength: 5),
        decode: { EddystoneURL.beacon(in: $0.bytes, payload: $0.payload, address: $0.address) })
}
