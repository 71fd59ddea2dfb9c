/// Address type as reported in an LE (Extended) Advertising Report.
public enum AddressType: UInt8, Sendable, Hashable {
    case publicDevice = 0x00
    case randomDevice = 0x01
    case publicIdentity = 0x02
    case randomIdentity = 0x03
    case anonymous = 0xFF
    case unknown = 0xFE

    public init(hciValue: UInt8) { self = AddressType(rawValue: hciValue) ?? .unknown }

    public var name: String {
        switch self {
        case .publicDevice: "public"
        case .randomDevice: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        case .unknown: "unknown"
        }
    }
}

/// One advertising report out of an HCI LE Advertising Report (0x02) or LE Extended Advertising Report (0x0D)
/// event. Legacy event types are mapped to the extended event-type bit field so both look alike.
public struct AdvertisingReport: Sendable, Equatable {
    /// Capture time (seconds since the Unix epoch), set by whoever read the bytes.
    public var timestamp: Timestamp
    /// Extended-report event type bits (bit 0 connectable, 1 scannable, 2 directed, 3 scan response,
    /// 4 legacy, bits 5-6 data status). Legacy ADV_IND etc. are mapped to their extended equivalents.
    public var eventType: UInt16
    /// True when the report came from an LE Extended Advertising Report event.
    public var isExtended: Bool
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// Received signal strength in dBm; nil when the controller said 127 ("not available").
    public var rssi: Int8?
    /// TX power from an extended report (127 = not available -> nil). Legacy reports have none.
    public var txPower: Int8?
    /// The AD structures (advertising data or scan response payload).
    public var data: [UInt8]
    /// Advertising set id of an extended report (0x00-0x0F; 0xFF = none); nil for legacy reports.
    public var advertisingSID: UInt8? = nil

    public init(
        timestamp: Timestamp, eventType: UInt16, isExtended: Bool, address: BluetoothAddress,
        addressType: AddressType, rssi: Int8?, txPower: Int8?, data: [UInt8]
    ) {
        self.timestamp = timestamp
        self.eventType = eventType
        self.isExtended = isExtended
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    public var isScanResponse: Bool { eventType & 0x08 != 0 }

    /// The event type by name: the legacy PDU types (`adv_ind`, `adv_direct_ind`, `adv_scan_ind`,
    /// `adv_nonconn_ind`, `scan_rsp`) for legacy reports, `ext_` + the property bits (`connectable`,
    /// `scannable`, `directed`, `scan_rsp`, joined by `_`; `ext_nonconn` for none) for extended PDUs.
    public var eventTypeName: String {
        let properties = eventType & 0x1F
        if properties & 0x10 != 0 {
            switch properties {
            case 0x13: return "adv_ind"
            case 0x15: return "adv_direct_ind"
            case 0x12: return "adv_scan_ind"
            case 0x10: return "adv_nonconn_ind"
            case 0x1A, 0x1B: return "scan_rsp"
            default: return "legacy_0x" + String(properties, radix: 16)
            }
        }
        var parts: [String] = []
        if properties & 0x01 != 0 { parts.append("connectable") }
        if properties & 0x02 != 0 { parts.append("scannable") }
        if properties & 0x04 != 0 { parts.append("directed") }
        if properties & 0x08 != 0 { parts.append("scan_rsp") }
        return parts.isEmpty ? "ext_nonconn" : "ext_" + parts.joined(separator: "_")
    }
    /// Data status bits 5-6: 0 complete, 1 incomplete (more to come), 2 incomplete (truncated).
    public var dataStatus: UInt8 { UInt8((eventType >> 5) & 0x3) }
}
