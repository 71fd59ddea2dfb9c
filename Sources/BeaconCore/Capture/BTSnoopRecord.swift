/// The link-layer type of a btsnoop file (header field "datalink").
public enum BTSnoopDatalink: UInt32, Sendable, Equatable {
    /// HCI packets without a type indicator; the record flags say command/event vs data.
    case hciUnencapsulated = 1001
    /// HCI packets with the H4 (UART) packet-type byte first (0x01 command, 0x02 ACL, 0x04 event, ...).
    case hciUART = 1002
}

/// Conversion between btsnoop timestamps (microseconds since midnight, 1 January of year 0 AD) and Unix time.
public enum BTSnoopTime {
    /// Microseconds from year 0 AD to the Unix epoch, as defined by the btsnoop format.
    public static let unixEpochOffset: UInt64 = 0x00dc_ddb3_0f2f_8000

    /// Seconds since the Unix epoch; negative for timestamps before 1970 (some tools write 0).
    public static func unixSeconds(fromBTSnoop micros: UInt64) -> Timestamp {
        if micros >= unixEpochOffset { return Double(micros - unixEpochOffset) / 1_000_000 }
        return -Double(unixEpochOffset - micros) / 1_000_000
    }

    /// The btsnoop timestamp for a Unix time (clamped at year 0).
    public static func btsnoopMicros(fromUnixSeconds seconds: Timestamp) -> UInt64 {
        guard seconds.isFinite else { return unixEpochOffset }
        let micros = (seconds * 1_000_000).rounded()
        if micros >= 0 {
            let capped = min(micros, Double(UInt64.max - unixEpochOffset))
            return unixEpochOffset + UInt64(capped)
        }
        let below = min(-micros, Double(unixEpochOffset))
        return unixEpochOffset - UInt64(below)
    }
}

/// One packet record of a btsnoop file.
public struct BTSnoopRecord: Sendable, Equatable {
    /// Length of the packet as captured on the wire (may exceed `payload.count` when the capture was cut).
    public var originalLength: UInt32
    /// Bit 0: 0 sent (host to controller), 1 received. Bit 1: 0 data, 1 command or event.
    public var flags: UInt32
    /// Packets lost between this record and the previous one.
    public var drops: UInt32
    /// Microseconds since year 0 AD (see `BTSnoopTime`).
    public var timestampMicros: UInt64
    /// The packet bytes as stored (for datalink 1002 starting with the H4 packet-type byte).
    public var payload: [UInt8]
    /// Byte offset of the record header in the file.
    public var fileOffset: Int

    public init(originalLength: UInt32, flags: UInt32, drops: UInt32, timestampMicros: UInt64,
                payload: [UInt8], fileOffset: Int = 0) {
        self.originalLength = originalLength
        self.flags = flags
        self.drops = drops
        self.timestampMicros = timestampMicros
        self.payload = payload
        self.fileOffset = fileOffset
    }

    public var isReceived: Bool { flags & 0x1 != 0 }
    public var isCommandOrEvent: Bool { flags & 0x2 != 0 }
    /// Capture time in seconds since the Unix epoch.
    public var unixTime: Timestamp { BTSnoopTime.unixSeconds(fromBTSnoop: timestampMicros) }

    /// The HCI event bytes (event code first, no H4 byte) if this record is an HCI event, else nil.
    /// For datalink 1002 the H4 byte decides (0x04); for 1001 the flags do (received command/event).
    public func hciEvent(datalink: BTSnoopDatalink) -> ArraySlice<UInt8>? {
        switch datalink {
        case .hciUART:
            guard let first = payload.first, first == 0x04 else { return nil }
            return payload.dropFirst()
        case .hciUnencapsulated:
            guard flags & 0x3 == 0x3 else { return nil }
            return payload[...]
        }
    }
}
