/// One sighting of one beacon (or one device, for non-beacon sightings), as the tracker consumes it.
///
/// Built from a decoded advertisement (`DecodedAdvertisement.observations(...)`), by the scenario simulator,
/// or by tests. This is the contract between decoding and tracking.
public struct Observation: Sendable, Equatable {
    public var timestamp: Timestamp
    /// Canonical beacon id, e.g. `ibeacon:<uuid>:<major>:<minor>`, `eddystone-uid:<ns>:<instance>`,
    /// `mac:<AA:BB:..>`; see docs/beacon-ids.md.
    public var beaconID: String
    /// Format name: `ibeacon`, `altbeacon`, `eddystone-uid`, `eddystone-url`, `eddystone-tlm`, `eddystone-eid`,
    /// `exposure-notification`, `apple-overflow`, a user layout's name, or `device` for plain devices.
    public var format: String
    /// Identifiers rendered as strings (layout rendering rules), in layout order.
    public var identifiers: [String]
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// Raw RSSI in dBm; nil when not available (HCI 127): counts as seen but never enters a filter.
    public var rssi: Int?
    /// Measured power at 1 m in dBm as transmitted (or the format's default); nil when unknown.
    public var measuredPower: Int?
    public var name: String?
    /// Data fields and telemetry, e.g. `battery_mv`, `temperature_c`, `url`, `data1`.
    public var fields: [String: FieldValue]

    public init(
        timestamp: Timestamp, beaconID: String, format: String, identifiers: [String] = [],
        address: BluetoothAddress, addressType: AddressType = .publicDevice, rssi: Int?,
        measuredPower: Int? = nil, name: String? = nil, fields: [String: FieldValue] = [:]
    ) {
        self.timestamp = timestamp
        self.beaconID = beaconID
        self.format = format
        self.identifiers = identifiers
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.name = name
        self.fields = fields
    }
}
