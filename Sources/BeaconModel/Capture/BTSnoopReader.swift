/// Reads btsnoop capture files (as written by Android's "Bluetooth HCI snoop log", BlueZ `btmon -w`, and
/// `BTSnoopWriter`). Pure: works on bytes already read; the caller does the file I/O.
///
/// File layout (all integers big endian): 16-byte header "btsnoop\0", version (1), datalink (1001 or 1002);
/// then records of original length, included length, flags, cumulative drops, 64-bit timestamp, packet bytes.
public struct BTSnoopReader: Sendable {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let headerLength = 16
    public static let recordHeaderLength = 24

    public let datalink: BTSnoopDatalink
    private var cursor: ByteCursor
    private var failed = false

    /// Checks the header. Throws with the offset of the first wrong header field.
    public init(bytes: [UInt8]) throws(DecodeError) {
        var cursor = ByteCursor(bytes)
        let magic = try cursor.readRange(8, "btsnoop header")
        guard bytes[magic].elementsEqual(Self.magic) else {
            throw DecodeError(offset: 0, reason: "not a btsnoop file (bad magic)")
        }
        let version = try cursor.readUInt32BE("btsnoop version")
        guard version == 1 else { throw DecodeError(offset: 8, reason: "unsupported btsnoop version \(version)") }
        let rawDatalink = try cursor.readUInt32BE("btsnoop datalink")
        guard let datalink = BTSnoopDatalink(rawValue: rawDatalink) else {
            throw DecodeError(offset: 12, reason: "unsupported btsnoop datalink \(rawDatalink) (need 1001 or 1002)")
        }
        self.datalink = datalink
        self.cursor = cursor
    }

    /// Byte offset of the next record.
    public var offset: Int { cursor.offset }

    /// The next record, nil at a clean end of file. A record cut short throws with the record's offset; after
    /// an error the reader stays at end.
    public mutating func next() throws(DecodeError) -> BTSnoopRecord? {
        guard !failed, !cursor.isAtEnd else { return nil }
        let start = cursor.offset
        do throws(DecodeError) {
            guard cursor.remaining >= Self.recordHeaderLength else {
                throw DecodeError(offset: start, reason: "truncated record header: \(cursor.remaining) of 24 bytes")
            }
            let original = try cursor.readUInt32BE()
            let included = try cursor.readUInt32BE()
            let flags = try cursor.readUInt32BE()
            let drops = try cursor.readUInt32BE()
            let timestamp = try cursor.readUInt64BE()
            guard Int(included) <= cursor.remaining else {
                throw DecodeError(
                    offset: start, reason: "truncated record: \(included) bytes declared, \(cursor.remaining) left")
            }
            let payload = try cursor.readBytes(Int(included), "record payload")
            return BTSnoopRecord(
                originalLength: original, flags: flags, drops: drops, timestampMicros: timestamp,
                payload: payload, fileOffset: start)
        } catch {
            failed = true
            throw error
        }
    }

    /// Every record of a capture. A truncated tail is returned as `error`, with the records before it kept.
    public static func readAll(_ bytes: [UInt8]) throws(DecodeError) -> (
        datalink: BTSnoopDatalink,
        records: [BTSnoopRecord],
        error: DecodeError?
    ) {
        var reader = try BTSnoopReader(bytes: bytes)
        var records: [BTSnoopRecord] = []
        while true {
            do throws(DecodeError) {
                guard let record = try reader.next() else { break }
                records.append(record)
            } catch {
                return (reader.datalink, records, error)
            }
        }
        return (reader.datalink, records, nil)
    }
}
