import BeaconModel

/// One advertising report with its parsed AD structures and the beacons recognised in it.
public struct DecodedAdvertisement: Sendable, Equatable {
    public var report: AdvertisingReport
    public var advertisingData: AdvertisingData
    public var beacons: [Beacon]

    public init(report: AdvertisingReport, advertisingData: AdvertisingData, beacons: [Beacon]) {
        self.report = report
        self.advertisingData = advertisingData
        self.beacons = beacons
    }

    /// One observation per beacon. A report without beacons yields a `device` observation (id
    /// `mac:<address>`, with `manufacturer_id` and `service_uuids` when present) if `includeDevices`.
    public func observations(includeDevices: Bool) -> [Observation] {
        if beacons.isEmpty {
            return includeDevices ? [deviceObservation()] : []
        }
        let name = advertisingData.localName
        let rssi = report.rssi.map { Int($0) }
        return beacons.map { beacon in
            Observation(
                timestamp: report.timestamp, beaconID: beacon.beaconID, format: beacon.format,
                identifiers: beacon.identifiers, address: report.address, addressType: report.addressType,
                rssi: rssi, measuredPower: beacon.measuredPower, name: name, fields: beacon.fields)
        }
    }

    /// The sighting of the sending device itself (format `device`).
    public func deviceObservation() -> Observation {
        Observation(
            timestamp: report.timestamp, beaconID: "mac:" + report.address.description, format: "device",
            identifiers: [report.address.description], address: report.address,
            addressType: report.addressType, rssi: report.rssi.map { Int($0) },
            measuredPower: nil, name: advertisingData.localName, fields: deviceFields)
    }

    /// `manufacturer_id` (first manufacturer data), `service_uuids` (comma separated), `tx_power_level`.
    public var deviceFields: [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        if let manufacturer = advertisingData.manufacturerData.first {
            fields["manufacturer_id"] = .int(Int64(manufacturer.companyID))
        }
        var uuids = advertisingData.serviceUUIDs.map(\.description)
        for data in advertisingData.serviceData where !uuids.contains(data.uuid.description) {
            uuids.append(data.uuid.description)
        }
        if !uuids.isEmpty { fields["service_uuids"] = .string(uuids.joined(separator: ",")) }
        if let power = advertisingData.txPowerLevel { fields["tx_power_level"] = .int(Int64(power)) }
        return fields
    }
}
