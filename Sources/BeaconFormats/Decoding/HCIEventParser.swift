import BeaconModel

/// Parses HCI events into advertising reports: LE Advertising Report (LE Meta 0x3E, subevent 0x02) and
/// LE Extended Advertising Report (subevent 0x0D). Other events yield no reports (not an error).
///
/// Input is one HCI event, starting with the event code, or with the H4 packet indicator 0x04 in front.
/// Malformed events throw a `DecodeError` whose offset counts from the first input byte.
public enum HCIEventParser {
    public static let leMetaEvent: UInt8 = 0x3E
    public static let advertisingReportSubevent: UInt8 = 0x02
    public static let extendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Legacy advertising PDU types (0x00-0x04) as extended-report event-type bits (legacy bit 4 set).
    public static let legacyEventTypes: [UInt16] = [
        0x13,  // ADV_IND: connectable, scannable, legacy
        0x15,  // ADV_DIRECT_IND: connectable, directed, legacy
        0x12,  // ADV_SCAN_IND: scannable, legacy
        0x10,  // ADV_NONCONN_IND: legacy
        0x1B,  // SCAN_RSP (to ADV_IND): connectable, scannable, scan response, legacy
    ]

    /// True when `bytes` look like an H4 event packet: 0x04 followed by a complete event. Event code 0x04
    /// (Connection Request) is told apart by its length byte; callers that know the framing (btsnoop records,
    /// the HCI socket) pass `h4:` explicitly instead.
    public static func hasH4Indicator(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 3 && bytes[0] == 0x04 && Int(bytes[2]) == bytes.count - 3
    }

    /// All advertising reports in one HCI event.
    /// - Parameter h4: whether `bytes` start with the H4 indicator; nil detects it (`hasH4Indicator`).
    public static func parse(_ bytes: [UInt8], timestamp: Timestamp = 0, h4: Bool? = nil) throws(DecodeError)
        -> [AdvertisingReport]
    {
        var reports: [AdvertisingReport] = []
        try forEachReport(in: bytes, timestamp: timestamp, h4: h4) { reports.append($0) }
        return reports
    }

    /// Calls `body` for each advertising report in one HCI event, without collecting them. Reports before a
    /// malformed one are delivered before the error is thrown.
    public static func forEachReport(
        in bytes: [UInt8], timestamp: Timestamp = 0, h4: Bool? = nil,
        _ body: (AdvertisingReport) -> Void
    ) throws(DecodeError) {
        var cursor = ByteCursor(bytes)
        if h4 ?? hasH4Indicator(bytes) {
            let indicator = try cursor.readUInt8("H4 packet indicator")
            guard indicator == 0x04 else {
                throw DecodeError(offset: 0, reason: "H4 packet type \(indicator) is not an HCI event (0x04)")
            }
        }
        let code = try cursor.readUInt8("event code")
        let lengthOffset = cursor.offset
        let length = Int(try cursor.readUInt8("parameter length"))
        guard cursor.remaining >= length else {
            throw DecodeError(
                offset: lengthOffset,
                reason: "event declares \(length) parameter bytes, \(cursor.remaining) present")
        }
        guard cursor.remaining == length else {
            throw DecodeError(
                offset: cursor.offset + length,
                reason: "\(cursor.remaining - length) byte(s) after the declared event end")
        }
        guard code == leMetaEvent, length > 0 else { return }
        switch try cursor.readUInt8("LE meta subevent") {
        case advertisingReportSubevent: try parseLegacy(&cursor, timestamp, body)
        case extendedAdvertisingReportSubevent: try parseExtended(&cursor, timestamp, body)
        default: return
        }
    }

    private static func parseLegacy(
        _ cursor: inout ByteCursor, _ timestamp: Timestamp,
        _ body: (AdvertisingReport) -> Void
    ) throws(DecodeError) {
        let count = try cursor.readUInt8("number of reports")
        for _ in 0..<count {
            let typeOffset = cursor.offset
            let legacyType = try cursor.readUInt8("event type")
            guard Int(legacyType) < legacyEventTypes.count else {
                throw DecodeError(offset: typeOffset, reason: "unknown legacy advertising event type \(legacyType)")
            }
            let addressType = try cursor.readUInt8("address type")
            let address = try readAddress(&cursor)
            let dataLength = Int(try cursor.readUInt8("data length"))
            let data = try cursor.readBytes(dataLength, "advertising data")
            let rssi = try cursor.readInt8("RSSI")
            body(
                AdvertisingReport(
                    timestamp: timestamp, eventType: legacyEventTypes[Int(legacyType)],
                    isExtended: false, address: address,
                    addressType: AddressType(hciValue: addressType),
                    rssi: rssi == 127 ? nil : rssi, txPower: nil, data: data))
        }
        try expectEnd(cursor)
    }

    private static func parseExtended(
        _ cursor: inout ByteCursor, _ timestamp: Timestamp,
        _ body: (AdvertisingReport) -> Void
    ) throws(DecodeError) {
        let count = try cursor.readUInt8("number of reports")
        for _ in 0..<count {
            let eventType = try cursor.readUInt16LE("event type")
            let addressType = try cursor.readUInt8("address type")
            let address = try readAddress(&cursor)
            try cursor.skip(2, "primary/secondary PHY")
            let sid = try cursor.readUInt8("advertising SID")
            let txPower = try cursor.readInt8("TX power")
            let rssi = try cursor.readInt8("RSSI")
            try cursor.skip(9, "periodic interval and direct address")
            let dataLength = Int(try cursor.readUInt8("data length"))
            let data = try cursor.readBytes(dataLength, "advertising data")
            var report = AdvertisingReport(
                timestamp: timestamp, eventType: eventType, isExtended: true,
                address: address, addressType: AddressType(hciValue: addressType),
                rssi: rssi == 127 ? nil : rssi,
                txPower: txPower == 127 ? nil : txPower, data: data)
            report.advertisingSID = sid
            body(report)
        }
        try expectEnd(cursor)
    }

    @inline(__always)
    private static func readAddress(_ cursor: inout ByteCursor) throws(DecodeError) -> BluetoothAddress {
        let range = try cursor.readRange(6, "address")
        let bytes = cursor.bytes
        var value: UInt64 = 0
        for index in range.reversed() { value = value << 8 | UInt64(bytes[index]) }
        return BluetoothAddress(rawValue: value)
    }

    private static func expectEnd(_ cursor: ByteCursor) throws(DecodeError) {
        guard cursor.isAtEnd else {
            throw DecodeError(offset: cursor.offset, reason: "\(cursor.remaining) byte(s) after the last report")
        }
    }
}
