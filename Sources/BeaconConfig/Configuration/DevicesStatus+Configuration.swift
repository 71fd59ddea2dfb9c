import BeaconEvents

extension DevicesStatus {
    /// The configured names of a gateway's configuration: its `beacons` and its private devices (`irk:<name>`).
    public static func names(of configuration: GatewayConfiguration) -> [String: String] {
        var names: [String: String] = [:]
        for beacon in configuration.beacons { names[beacon.id] = beacon.name }
        for device in configuration.devices.known { names[device.beaconID] = device.name }
        return names
    }
}
