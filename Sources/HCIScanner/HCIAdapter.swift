import BeaconFormats
import BeaconModel
import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// One Bluetooth adapter as the kernel lists it, and the ioctls on it (through an HCI control socket).
/// Public for the GATT link (`GATTLink`), which binds its L2CAP sockets to the adapter's address.
public struct HCIAdapter: Sendable, Equatable {
    public var deviceID: Int32
    /// `hci0`
    public var name: String
    public var address: BluetoothAddress
    public var isUp: Bool

    /// Finds the adapter the configuration names. Never falls back to another adapter.
    public static func resolve(_ selector: AdapterSelector) throws(HCIError) -> HCIAdapter {
        switch selector {
        case let .index(index):
            return try info(deviceID: Int32(index), label: selector.description)
        case let .address(address):
            let control = try ControlSocket(label: selector.description)
            defer { control.close() }
            var ids = [UInt16](repeating: 0, count: Int(HCI_MAX_DEV))
            let count = bb_hci_dev_ids(control.fd, &ids, Int32(ids.count))
            guard count >= 0 else {
                throw HCIError.system(errno, adapter: selector.description, call: "ioctl(HCIGETDEVLIST)")
            }
            for id in ids.prefix(Int(count)) {
                if let adapter = try? info(deviceID: Int32(id), label: "hci\(id)"), adapter.address == address {
                    return adapter
                }
            }
            throw HCIError(
                kind: .adapterAbsent, adapter: selector.description, call: "ioctl(HCIGETDEVLIST)",
                errno: ENODEV)
        }
    }

    /// The corresponding C call is `ioctl(HCIGETDEVINFO)`.
    static func info(deviceID: Int32, label: String) throws(HCIError) -> HCIAdapter {
        let control = try ControlSocket(label: label)
        defer { control.close() }
        var info = hci_dev_info()
        info.dev_id = UInt16(truncatingIfNeeded: deviceID)
        guard bb_hci_dev_info(control.fd, &info) == 0 else {
            throw HCIError.system(errno, adapter: label, call: "ioctl(HCIGETDEVINFO)")
        }
        let name = withUnsafeBytes(of: info.name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let bytes = withUnsafeBytes(of: info.bdaddr.b) { Array($0) }
        return HCIAdapter(
            deviceID: deviceID, name: name.isEmpty ? "hci\(deviceID)" : name,
            address: BluetoothAddress(littleEndianBytes: bytes) ?? BluetoothAddress(rawValue: 0),
            isUp: bb_hci_dev_is_up(&info) != 0)
    }

    /// Powers the adapter on; already up is fine. The corresponding C call is `ioctl(HCIDEVUP)`.
    public static func up(deviceID: Int32, label: String) throws(HCIError) {
        let control = try ControlSocket(label: label)
        defer { control.close() }
        guard bb_hci_dev_up(control.fd, deviceID) == 0 || errno == EALREADY else {
            let code = errno
            // EPERM/EACCES: no CAP_NET_ADMIN; ERFKILL: blocked. Either way the adapter stays down.
            let kind: HCIError.Kind =
                switch code {
                case EPERM, EACCES, ERFKILL: .adapterDown
                default: HCIError.system(code, adapter: label, call: "").kind
                }
            throw HCIError(kind: kind, adapter: label, call: "ioctl(HCIDEVUP)", errno: code)
        }
    }

    /// Powers the adapter off. The corresponding C call is `ioctl(HCIDEVDOWN)`.
    static func down(deviceID: Int32, label: String) throws(HCIError) {
        let control = try ControlSocket(label: label)
        defer { control.close() }
        guard bb_hci_dev_down(control.fd, deviceID) == 0 else {
            throw HCIError.system(errno, adapter: label, call: "ioctl(HCIDEVDOWN)")
        }
    }
}

/// An unbound HCI socket for ioctls.
private struct ControlSocket {
    let fd: Int32

    init(label: String) throws(HCIError) {
        fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw HCIError.system(errno, adapter: label, call: "socket(AF_BLUETOOTH, BTPROTO_HCI)") }
    }

    func close() { _ = Glibc.close(fd) }
}
