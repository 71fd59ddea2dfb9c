extension BeaconFormat {
    /// Eddystone-EID (service data 0xFEAA, frame 0x30): transmit power at 0 m, 8-byte ephemeral id (resolving it
    /// needs the beacon's identity key and a resolver; the id is reported as sent).
    static let eddystoneEID = BeaconFormat(
        name: "eddystone-eid", summary: "Eddystone-EID", idShape: .hex([8]),
        fields: [
            Field("tx_power_0m", unit: "dBm", .info, "transmit power at 0 m as sent (measured power is this - 41)")
        ],
        syntheticFrame: "0d16aafe 30 f4 1122334455667788",
        layout: BeaconLayout(
            builtin: "eddystone-eid", layout: "s:0-1=feaa,m:2-2=30,p:3-3:-41,i:4-11",
            rawPowerFieldName: "tx_power_0m"))
}
