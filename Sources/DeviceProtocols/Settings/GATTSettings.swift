import BeaconConfigReading
import BeaconModel

/// The `gatt` section: the daemon connects to devices over LE on MQTT commands and reads the device information
/// of configured devices on a schedule (docs/gatt.md; every key is in docs/configuration.md). Off by default.
public struct GATTSettings: Sendable, Equatable {
    /// What a scheduled (or `info`) read of a device fetches.
    public enum InfoField: String, Sendable, Equatable, CaseIterable {
        /// Firmware Revision String (0x2A26, Device Information Service).
        case firmware
        /// Hardware Revision String (0x2A27, Device Information Service).
        case hardware
        /// Battery Level (0x2A19, Battery Service), percent.
        case battery

        /// The characteristic read for this field.
        public var uuid: GATTUUID {
            switch self {
            case .firmware: .uuid16(0x2A26)
            case .hardware: .uuid16(0x2A27)
            case .battery: .uuid16(0x2A19)
            }
        }
    }

    /// One device whose information is read on a schedule (`gatt.devices[]`).
    public struct Device: Sendable, Equatable {
        public var address: BluetoothAddress
        /// `random`: the address is random (static or private), not public.
        public var random: Bool
        /// `name`: shown in Home Assistant; also the object id's base (`bb_<gateway>_<name>`).
        public var name: String
        /// `interval_s`: seconds between two reads (the first one shortly after the start).
        public var interval: Double
        /// `read`: the fields read.
        public var read: [InfoField]
        /// `firmware`: a Secure DFU package (nRF Util `.zip`) for this device: validated at the start and before
        /// each update; its version is the Home Assistant update entity's `latest_version` (docs/gatt.md).
        public var firmware: String?

        public init(
            address: BluetoothAddress, random: Bool = false, name: String, interval: Double = 3600,
            read: [InfoField] = InfoField.allCases, firmware: String? = nil
        ) {
            self.address = address
            self.random = random
            self.name = name
            self.interval = interval
            self.read = read
            self.firmware = firmware
        }
    }

    /// `gatt.enabled`: subscribe to the command topics and run the device schedule.
    public var enabled: Bool
    /// `gatt.slots`: connections at a time (1-3, as ESPHome's proxies offer 3).
    public var slots: Int
    /// `gatt.connect_timeout_s`: the LE connect (the seed's flow: 20 s).
    public var connectTimeout: Double
    /// `gatt.request_timeout_s`: each ATT request (at most the spec's 30 s).
    public var requestTimeout: Double
    /// `gatt.allowed_devices`: the only devices commands may reach; empty: any device.
    public var allowedDevices: [BluetoothAddress]
    /// `gatt.devices`: device information read on a schedule.
    public var devices: [Device]

    /// Commands waiting for a free worker at most; one more is answered `busy` at once.
    public static let maxPendingCommands = 16
    /// A reply that cannot be sent (broker unreachable) is dropped after this many seconds.
    public static let replyLifetime: Double = 30

    public init(
        enabled: Bool = false, slots: Int = 3, connectTimeout: Double = 20, requestTimeout: Double = 30,
        allowedDevices: [BluetoothAddress] = [], devices: [Device] = []
    ) {
        self.enabled = enabled
        self.slots = slots
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.allowedDevices = allowedDevices
        self.devices = devices
    }

    /// Whether commands may connect to `address`.
    public func allows(_ address: BluetoothAddress) -> Bool {
        allowedDevices.isEmpty || allowedDevices.contains(address)
    }

    /// Names unique and usable as an object id; the same address not twice.
    public func validate(path: String = "gatt") -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        var names: Set<String> = []
        var addresses: Set<BluetoothAddress> = []
        for (index, device) in devices.enumerated() {
            let at = "\(path).devices[\(index)]"
            if !names.insert(device.name).inserted {
                issues.append(ConfigIssue(path: "\(at).name", message: "`\(device.name)` is used twice"))
            }
            if !addresses.insert(device.address).inserted {
                issues.append(ConfigIssue(path: "\(at).address", message: "\(device.address) is listed twice"))
            }
            if let firmware = device.firmware, firmware.isEmpty || firmware.utf8.count > 4096 {
                issues.append(ConfigIssue(path: "\(at).firmware", message: "must be a path of 1-4096 bytes"))
            }
            if device.read.isEmpty {
                issues.append(ConfigIssue(path: "\(at).read", message: "must name at least one field"))
            }
            if !allows(device.address) {
                issues.append(
                    ConfigIssue(path: "\(at).address", message: "\(device.address) is not in \(path).allowed_devices"))
            }
        }
        return issues
    }
}
