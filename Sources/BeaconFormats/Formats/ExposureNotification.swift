extension BeaconFormat {
    /// Exposure Notification (GAEN): service data 0xFD6F with a 16-byte rolling proximity identifier (rendered as
    /// hex) and 4 bytes of encrypted metadata; no power transmitted (-59 dBm assumed).
    static let exposureNotification = BeaconFormat(
        name: "exposure-notification", summary: "Exposure Notification", idShape: .hex([16]),
        fields: [Field("metadata", .info, "associated encrypted metadata (hex)")],
        syntheticFrame: "03036ffd 17166ffd 000102030405060708090a0b0c0d0e0f 40080000",
        layout: BeaconLayout(
            builtin: "exposure-notification", layout: "s:0-1=fd6f,p:-:-59,i:2-17,d:18-21",
            hexIdentifiers: true, dataFieldNames: ["metadata"], hexDataFields: true))
}
