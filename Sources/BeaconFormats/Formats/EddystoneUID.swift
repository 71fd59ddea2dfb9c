extension BeaconFormat {
    /// Eddystone-UID (service data 0xFEAA, frame 0x00): transmit power at 0 m, 10-byte namespace, 6-byte instance.
    static let eddystoneUID = BeaconFormat(
        name: "eddystone-uid", summary: "Eddystone-UID", idShape: .hex([10, 6]),
        fields: [
            Field("tx_power_0m", unit: "dBm", .info, "transmit power at 0 m as sent (measured power is this - 41)")
        ],
        syntheticFrame: "020106 0303aafe 1716aafe 00 ee 00010203040506070809 0a0b0c0d0e0f 0000",
        layout: BeaconLayout(
            builtin: "eddystone-uid", layout: "s:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19",
            rawPowerFieldName: "tx_power_0m"))
}
