extension BeaconFormat {
    /// Apple iBeacon: manufacturer data of Apple (0x004C), `02 15`, 16-byte proximity UUID, major, minor (big
    /// endian), measured power at 1 m. Only under Apple's company id, as Home Assistant's parser (the Android Beacon
    /// Library's `m:2-3=0215,...` matches any company; add it as a user layout for that).
    package static let iBeacon = BeaconFormat(
        name: "ibeacon", summary: "Apple iBeacon", idShape: .uuidMajorMinor,
        syntheticFrame: "020106 1aff4c00 0215 e2c56db5dffb48d2b060d0f5a71096e0 0001 0002 c5",
        layout: BeaconLayout(builtin: "ibeacon", layout: "m:0-3=4c000215,i:4-19,i:20-21,i:22-23,p:24-24"))
}
