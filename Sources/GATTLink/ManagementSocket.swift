import BeaconModel
import BeaconRuntime
import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's Bluetooth management interface (mgmt, `HCI_CHANNEL_CONTROL`), for the one thing a GATT connect
/// needs from it: LE enabled on the adapter. The kernel refuses an LE L2CAP connect with ECONNREFUSED while
/// the adapter's LE setting is off, and only mgmt turns it on (bluetoothd does at start; without bluetoothd a
/// dual-mode controller stays BR/EDR only). Commands are hand-encoded (Management API, doc/mgmt-api.txt in
/// BlueZ): header opcode, controller index, parameter length, all little endian.
enum ManagementSocket {
    static let readControllerInformation: UInt16 = 0x0004
    static let setLowEnergy: UInt16 = 0x000D
    static let commandComplete: UInt16 = 0x0001
    static let commandStatus: UInt16 = 0x0002
    /// Current settings bit 9 (MGMT_SETTING_LE).
    static let lowEnergySetting: UInt32 = 1 << 9

    /// Turns LE on for adapter `index` when it is off (needs CAP_NET_ADMIN). Returns whether it had to.
    static func ensureLowEnergy(index: Int32, adapterName: String, peer: String) throws(GATTLinkError) -> Bool {
        let step = "mgmt(\(adapterName))"
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw GATTLinkError.system(errno, peer: peer, step: step) }
        defer { _ = Glibc.close(fd) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else { throw GATTLinkError.system(errno, peer: peer, step: "bind(\(step))") }
        let information = try command(fd, readControllerInformation, index: index, [], peer: peer, step: step)
        guard information.count >= 17 else {
            throw GATTLinkError(
                .system, peer: peer, step: "\(step): controller information of \(information.count) bytes")
        }
        let current = information[13...16].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard current & lowEnergySetting == 0 else { return false }
        _ = try command(fd, setLowEnergy, index: index, [0x01], peer: peer, step: "\(step): Set Low Energy")
        return true
    }

    /// Sends one command and returns the parameters of its Command Complete (2 s at most).
    private static func command(
        _ fd: Int32, _ opcode: UInt16, index: Int32, _ parameters: [UInt8], peer: String, step: String
    ) throws(GATTLinkError) -> [UInt8] {
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let packet =
            le16(opcode) + le16(UInt16(truncatingIfNeeded: index)) + le16(UInt16(parameters.count)) + parameters
        let written = packet.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == packet.count else {
            throw GATTLinkError.system(written < 0 ? errno : EIO, peer: peer, step: step)
        }
        let deadline = SystemClock.monotonic() + 2
        var buffer = [UInt8](repeating: 0, count: 1024)
        while SystemClock.monotonic() < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count >= 9 else { continue }
            let event = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
            let eventIndex = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
            let replyOpcode = UInt16(buffer[6]) | UInt16(buffer[7]) << 8
            guard event == commandComplete || event == commandStatus, replyOpcode == opcode,
                eventIndex == UInt16(truncatingIfNeeded: index)
            else { continue }
            let status = buffer[8]
            guard status == 0 else {
                // 0x14 Permission Denied, 0x0C Not Supported, 0x11 Invalid Index.
                let kind: GATTLinkError.Kind =
                    switch status {
                    case 0x14: .adapter(.permissionDenied)
                    case 0x11: .adapter(.adapterAbsent)
                    default: .system
                    }
                throw GATTLinkError(kind, peer: peer, step: "\(step): mgmt status 0x\(HexText.hex(byte: status))")
            }
            return Array(buffer[9..<count])
        }
        throw GATTLinkError(.system, peer: peer, step: "\(step): no mgmt reply within 2 s")
    }
}
