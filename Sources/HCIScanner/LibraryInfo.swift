import CBlueZ

/// The HCI scanner adapter: the only module that talks to libbluetooth and the kernel's raw HCI socket.
public enum HCIScannerLibrary {
    /// The size of an HCI event header as libbluetooth defines it (`HCI_EVENT_HDR_SIZE`).
    public static let eventHeaderSize = Int(HCI_EVENT_HDR_SIZE)
}
