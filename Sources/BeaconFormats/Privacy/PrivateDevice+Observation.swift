import BeaconModel

extension PrivateDevice {
    /// The sighting of this device in `decoded` (an advertisement from one of its private addresses): format
    /// `irk`, id `irk:<name>`, the device name as the only identifier, the configured measured power, and the
    /// device fields (`manufacturer_id`, `service_uuids`, `tx_power_level`) of the advertisement.
    public func observation(from decoded: DecodedAdvertisement) -> Observation {
        var observation = decoded.deviceObservation()
        observation.beaconID = beaconID
        observation.format = PrivateDevice.format
        observation.identifiers = [name]
        observation.measuredPower = measuredPower
        return observation
    }
}
