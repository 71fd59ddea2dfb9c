import BeaconModel

/// Encodes advertising reports as HCI LE Advertising Report events (LE Meta 0x3E, subevent 0x02), the
/// inverse of `HCIEventParser` for legacy reports. Used to turn simulated scenarios into btsnoop captures
/// that go through the whole pipeline (the demo, the daemon bench, tests), never on live traffic.
public enum AdvertisingReportEncoder {
    /// Legacy event type for a report: ADV_IND (0), ADV_SCAN_IND (2), ADV_NONCONN_IND (3), SCAN_RSP (4).
    public static func legacyEventType(_ report: AdvertisingReport) -> UInt8 {
        if report.isScanResponse { return 0x04 }
        switch report.eventType & 0x3 {
        case 0x3: return 0x00
        case 0x2: return 0x02
        default: return 0x03
        }
    }

    /// One event holding `report` (event code first, no H4 byte). Nil when the AD data is over 31 bytes.
    public static func legacyEvent(_ report: AdvertisingReport) -> [UInt8]? {
        guard report.data.count <= 31 else { return nil }
        var out: [UInt8] = [0x3E, 0, 0x02, 0x01, legacyEventType(report)]
        out.append(report.addressType == .randomDevice ? 0x01 : 0x00)
        out.append(contentsOf: report.address.littleEndianBytes)
        out.append(UInt8(report.data.count))
        out.append(contentsOf: report.data)
        out.append(UInt8(bitPattern: report.rssi ?? 127))
        out[1] = UInt8(out.count - 2)
        return out
    }
}
