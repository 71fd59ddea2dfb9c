/// Encodes btsnoop files (version 1). Pure: returns bytes, the caller writes them.
///
/// Typical use: write `header()` once, then `eventRecord(_:timestamp:)` for each HCI event received.
public struct BTSnoopWriter: Sendable {
    public let datalink: BTSnoopDatalink

    public init(datalink: BTSnoopDatalink = .hciUART) { self.datalink = datalink }

    /// The 16-byte file header.
    public func header() -> [UInt8] {
        var out = BTSnoopReader.magic
        out.reserveCapacity(BTSnoopReader.headerLength)
        Self.appendUInt32BE(1, to: &out)
        Self.appendUInt32BE(datalink.rawValue, to: &out)
        return out
    }

    /// A record for an HCI event received from the controller. `event` starts with the event code (no H4
    /// byte); with datalink 1002 the H4 indicator 0x04 is prepended. `timestamp` is Unix seconds.
    public func eventRecord(_ event: [UInt8], timestamp: Timestamp, drops: UInt32 = 0) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(event.count + 1)
        if datalink == .hciUART { payload.append(0x04) }
        payload.append(contentsOf: event)
        return record(
            payload: payload, flags: 0x3, drops: drops,
            timestampMicros: BTSnoopTime.btsnoopMicros(fromUnixSeconds: timestamp))
    }

    /// A record with explicit flags (bit 0 received, bit 1 command/event) and packet bytes as stored.
    public func record(payload: [UInt8], flags: UInt32, drops: UInt32, timestampMicros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(BTSnoopReader.recordHeaderLength + payload.count)
        let length = UInt32(truncatingIfNeeded: payload.count)
        Self.appendUInt32BE(length, to: &out)
        Self.appendUInt32BE(length, to: &out)
        Self.appendUInt32BE(flags, to: &out)
        Self.appendUInt32BE(drops, to: &out)
        Self.appendUInt32BE(UInt32(truncatingIfNeeded: timestampMicros >> 32), to: &out)
        Self.appendUInt32BE(UInt32(truncatingIfNeeded: timestampMicros), to: &out)
        out.append(contentsOf: payload)
        return out
    }

    private static func appendUInt32BE(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }
}
