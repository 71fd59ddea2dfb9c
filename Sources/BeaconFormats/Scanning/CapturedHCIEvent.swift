import BeaconModel

/// One HCI event as a source delivered it: the event bytes (event code first, no H4 packet-type byte) and
/// the time it was captured (seconds since the Unix epoch; read by the adapter or taken from a capture file).
public struct CapturedHCIEvent: Sendable, Equatable {
    public var timestamp: Timestamp
    public var bytes: [UInt8]

    public init(timestamp: Timestamp, bytes: [UInt8]) {
        self.timestamp = timestamp
        self.bytes = bytes
    }

    /// The HCI event code (0x3E for LE Meta), nil for an empty buffer.
    public var eventCode: UInt8? { bytes.first }

    /// The LE Meta subevent code (0x02 LE Advertising Report, 0x0D LE Extended Advertising Report), nil for
    /// other events or a buffer too short to hold one.
    public var leSubevent: UInt8? {
        guard bytes.count >= 3, bytes[0] == 0x3E else { return nil }
        return bytes[2]
    }

    /// True for LE Connection Complete and LE Enhanced Connection Complete (v1 and v2), whatever their status.
    public var isLEConnectionComplete: Bool {
        guard let sub = leSubevent else { return false }
        return sub == 0x01 || sub == 0x0A || sub == 0x29
    }

    /// True for LE Advertising Report, LE Extended Advertising Report and LE Directed Advertising Report.
    public var isAdvertisingReport: Bool {
        guard let sub = leSubevent else { return false }
        return sub == 0x02 || sub == 0x0D || sub == 0x0B
    }
}
