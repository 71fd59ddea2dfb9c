/// What a gateway advertises beside its scan: non-connectable, non-scannable undirected advertising of one
/// payload at one interval (the identity beacon of self-calibration, docs/rooms.md).
public struct AdvertisingParameters: Sendable, Equatable {
    /// Advertising interval in units of 0.625 ms (0x0020-0x4000: 20 ms to 10.24 s); min and max alike.
    public var intervalUnits: UInt32
    /// The AD structures sent (at most 31 bytes: a legacy PDU, so that legacy scanners hear it too).
    public var data: [UInt8]
    /// Transmit power asked of the controller (dBm, -127...20); only the extended commands carry it.
    public var txPower: Int8

    public init(intervalUnits: UInt32, data: [UInt8], txPower: Int8) {
        self.intervalUnits = intervalUnits
        self.data = Array(data.prefix(31))
        self.txPower = txPower
    }

    /// The interval in units for milliseconds (rounded, clamped to the BLE range 0x0020-0x4000).
    public static func units(milliseconds: Double) -> UInt32 {
        guard milliseconds.isFinite else { return 0x0800 }
        return UInt32(max(0x20, min(0x4000, (milliseconds / 0.625).rounded())))
    }

    /// An iBeacon payload: Flags (LE General Discoverable, BR/EDR not supported), then Apple's manufacturer data
    /// 0x02 0x15 with the UUID, major and minor (big endian) and the measured power at 1 m. Nil for a UUID that
    /// is not 32 hex digits.
    public static func iBeacon(uuid: String, major: UInt16, minor: UInt16, measuredPower: Int8) -> [UInt8]? {
        // 32 hex digits to 16 bytes: the same reading as a BTHome key's.
        guard let bytes = BTHomeKey.parse(uuid) else { return nil }
        var data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
        data += bytes
        data += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
        data.append(UInt8(bitPattern: measuredPower))
        return data
    }
}

/// Builders for the advertising commands (Core spec 5.x, Vol 4 Part E 7.8.5-7.8.9 legacy, 7.8.53-7.8.56
/// extended). The scanner uses the extended ones when it scans with extended commands (a controller rejects a
/// mix of legacy and extended commands) and the legacy ones otherwise.
extension HCICommand {
    /// The advertising set the scanner uses with the extended commands.
    public static let identityAdvertisingHandle: UInt8 = 0x00

    /// LE Set Advertising Parameters (0x2006): interval min, max (2 bytes each), type ADV_NONCONN_IND (0x03),
    /// own address public, peer address type and address (unused), channel map 37/38/39, filter policy none.
    public static func leSetAdvertisingParameters(_ parameters: AdvertisingParameters) -> HCICommand {
        let interval = UInt16(clamping: parameters.intervalUnits)
        var bytes = littleEndian16(interval) + littleEndian16(interval)
        bytes += [0x03, 0x00, 0x00]
        bytes += [UInt8](repeating: 0, count: 6)
        bytes += [0x07, 0x00]
        return HCICommand(ogf: 0x08, ocf: 0x0006, parameters: bytes)
    }

    /// LE Read Advertising Physical Channel Tx Power (0x2007): returns status + the power level (dBm, signed).
    public static let leReadAdvertisingChannelTxPower = HCICommand(ogf: 0x08, ocf: 0x0007)

    /// LE Set Advertising Data (0x2008): length, then 31 bytes (zero padded).
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand {
        let data = Array(data.prefix(31))
        return HCICommand(
            ogf: 0x08, ocf: 0x0008,
            parameters: [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// LE Set Advertising Enable (0x200A).
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(ogf: 0x08, ocf: 0x000A, parameters: [enable ? 0x01 : 0x00])
    }

    /// LE Set Extended Advertising Parameters (0x2036, v1): handle, properties 0x0010 (a legacy PDU,
    /// ADV_NONCONN_IND), primary interval min and max (3 bytes each), channel map 37/38/39, own address public,
    /// peer address type and address (unused), filter policy none, tx power (dBm, signed), primary PHY LE 1M,
    /// secondary max skip 0, secondary PHY LE 1M, SID 0, no scan request notifications. Returns status + the
    /// selected tx power.
    public static func leSetExtendedAdvertisingParameters(_ parameters: AdvertisingParameters) -> HCICommand {
        let interval = min(parameters.intervalUnits, 0xFF_FFFF)
        let interval3: [UInt8] = [UInt8(interval & 0xFF), UInt8((interval >> 8) & 0xFF), UInt8(interval >> 16)]
        var bytes: [UInt8] = [identityAdvertisingHandle, 0x10, 0x00]
        bytes += interval3 + interval3
        bytes += [0x07, 0x00, 0x00]
        bytes += [UInt8](repeating: 0, count: 6)
        bytes += [0x00, UInt8(bitPattern: parameters.txPower), 0x01, 0x00, 0x01, 0x00, 0x00]
        return HCICommand(ogf: 0x08, ocf: 0x0036, parameters: bytes)
    }

    /// LE Set Extended Advertising Data (0x2037): handle, operation 0x03 (complete data), fragment preference
    /// 0x01 (no fragmenting), length, data.
    public static func leSetExtendedAdvertisingData(_ data: [UInt8]) -> HCICommand {
        let data = Array(data.prefix(31))
        return HCICommand(
            ogf: 0x08, ocf: 0x0037, parameters: [identityAdvertisingHandle, 0x03, 0x01, UInt8(data.count)] + data)
    }

    /// LE Set Extended Advertising Enable (0x2039): enable, one set: handle, duration 0 (until disabled), max
    /// events 0 (no limit). Disabling names the same set.
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(
            ogf: 0x08, ocf: 0x0039,
            parameters: [enable ? 0x01 : 0x00, 0x01, identityAdvertisingHandle, 0x00, 0x00, 0x00])
    }

    /// The commands that (re)start advertising, in order: disable first (a controller rejects parameters while
    /// advertising), parameters, data, enable.
    public static func advertisingSequence(_ parameters: AdvertisingParameters, extended: Bool) -> [HCICommand] {
        if extended {
            return [
                leSetExtendedAdvertisingEnable(false), leSetExtendedAdvertisingParameters(parameters),
                leSetExtendedAdvertisingData(parameters.data), leSetExtendedAdvertisingEnable(true),
            ]
        }
        return [
            leSetAdvertisingEnable(false), leSetAdvertisingParameters(parameters),
            leSetAdvertisingData(parameters.data), leSetAdvertisingEnable(true),
        ]
    }

    private static func littleEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}
