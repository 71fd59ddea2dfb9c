/// The link-layer type of a btsnoop file (header field "datalink").
public enum BTSnoopDatalink: UInt32, Sendable, Equatable {
    /// HCI packets without a type indicator; the record flags say command/event vs data.
    case hciUnencapsulated = 1001
    /// HCI packets with the H4 (UART) packet-type byte first (0x01 command, 0x02 ACL, 0x04 event, ...).
    case hciUART = 1002
}
