/// Builds init packets the way nrfutil does (the `dfu-cc.proto` messages), for the DFU tests of the core and of
/// the link.
public enum TestInitPacket {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        repeat {
            out.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value > 0
        return out
    }

    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }
    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    /// A `Packet` holding a (signed, when `signed`) `Command` with an application `InitCommand`.
    public static func bytes(version: UInt32, applicationSize: Int, signed: Bool = true) -> [UInt8] {
        let hash = field(1, varint: 3) + field(2, bytes: [UInt8](repeating: 0xAB, count: 32))
        let initCommand =
            field(1, varint: UInt64(version)) + field(2, varint: 52) + field(3, bytes: [0xB6, 0x01])
            + field(4, varint: 0) + field(7, varint: UInt64(applicationSize)) + field(8, bytes: hash)
        let command = field(1, varint: 1) + field(2, bytes: initCommand)
        guard signed else { return field(1, bytes: command) }
        let signedCommand =
            field(1, bytes: command) + field(2, varint: 0) + field(3, bytes: [UInt8](repeating: 0x5C, count: 64))
        return field(2, bytes: signedCommand)
    }
}
