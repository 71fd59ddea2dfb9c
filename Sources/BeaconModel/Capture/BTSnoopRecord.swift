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

    public init(
        originalLength: UInt32, flags: UInt32, drops: UInt32, timestampMicros: UInt64,
        payload: [UInt8], fileOffset: Int = 0
    ) {
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
        Self.hciEvent(in: payload[...], flags: flags, datalink: datalink)
    }

    /// `hciEvent(datalink:)` for a record's payload and flags that were not made into a record (the streaming
    /// reader's).
    public static func hciEvent(in payload: ArraySlice<UInt8>, flags: UInt32, datalink: BTSnoopDatalink)
        -> ArraySlice<UInt8>?
    {
        switch datalink {
        case .hciUART:
            guard let first = payload.first, first == 0x04 else { return nil }
            return payload.dropFirst()
        case .hciUnencapsulated:
            guard flags & 0x3 == 0x3 else { return nil }
            return payload
        }
    }
}
