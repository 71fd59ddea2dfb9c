extension BeaconFormat {
    /// AltBeacon (Radius Networks' open specification): any company id, beacon code `be ac`, 20-byte id, reference
    /// RSSI, one reserved byte.
    package static let altBeacon = BeaconFormat(
        name: "altbeacon", summary: "AltBeacon", idShape: .uuidMajorMinor,
        fields: [Field("mfg_reserved", .info, "the manufacturer-reserved byte")],
        syntheticFrame: "1bff1801 beac 2f234454cf6d4a0fadf2f4911ba9ffa6 0001 0002 c5 00",
        layout: BeaconLayout(
            builtin: "altbeacon", layout: "m:2-3=beac,i:4-19,i:20-21,i:22-23,p:24-24,d:25-25",
            dataFieldNames: ["mfg_reserved"]))
}
