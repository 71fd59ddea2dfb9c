import BeaconModel

/// JSON renderings of decoded advertising (used by `beaconbridge decode` and diagnostics). Key order is fixed;
/// optional values are left out rather than printed as null, except `rssi`. See docs/decoding.md.
extension AdvertisingReport {
    public var jsonMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [
            ("address", .string(address.description)),
            ("address_type", .string(addressType.name)),
            ("event_type", .int(Int64(eventType))),
            ("event_type_name", .string(eventTypeName)),
            ("extended", .bool(isExtended)),
            ("scan_response", .bool(isScanResponse)),
            ("rssi", rssi.map { .int(Int64($0)) } ?? .null),
        ]
        if let txPower { members.append(("tx_power", .int(Int64(txPower)))) }
        if isExtended {
            members.append(("data_status", .int(Int64(dataStatus))))
            if let advertisingSID { members.append(("sid", .int(Int64(advertisingSID)))) }
        }
        return members
    }
}

extension AdvertisingData {
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("data", .string(HexText.hex(bytes, 0..<bytes.count)))]
        if let flags { members.append(("flags", .int(Int64(flags)))) }
        if let localName { members.append(("name", .string(localName))) }
        if let txPowerLevel { members.append(("tx_power_level", .int(Int64(txPowerLevel)))) }
        let uuids = serviceUUIDs
        if !uuids.isEmpty { members.append(("service_uuids", .array(uuids.map { .string($0.description) }))) }
        let services = serviceData
        if !services.isEmpty {
            members.append(
                (
                    "service_data",
                    .array(
                        services.map { service in
                            .object([
                                ("uuid", .string(service.uuid.description)),
                                (
                                    "data",
                                    .string(
                                        HexText.hex(
                                            bytes,
                                            (service.range.lowerBound + service.uuid.size)..<service.range.upperBound))
                                ),
                            ])
                        })
                ))
        }
        let manufacturers = manufacturerData
        if !manufacturers.isEmpty {
            members.append(
                (
                    "manufacturer_data",
                    .array(
                        manufacturers.map { entry in
                            .object([
                                ("company_id", .int(Int64(entry.companyID))),
                                (
                                    "data",
                                    .string(HexText.hex(bytes, (entry.range.lowerBound + 2)..<entry.range.upperBound))
                                ),
                            ])
                        })
                ))
        }
        if let uri {
            var object: [(String, JSONValue)] = [("scheme_code", .int(Int64(uri.schemeCode)))]
            if let scheme = uri.scheme { object.append(("scheme", .string(scheme))) }
            object.append(("text", .string(uri.text)))
            if let full = uri.uri { object.append(("uri", .string(full))) }
            members.append(("uri", .object(object)))
        }
        if let overrunOffset { members.append(("overrun_offset", .int(Int64(overrunOffset)))) }
        return .object(members)
    }
}

extension Beacon {
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(beaconID)),
            ("format", .string(format)),
            ("identifiers", .array(identifiers.map { .string($0) })),
        ]
        if let measuredPower { members.append(("measured_power", .int(Int64(measuredPower)))) }
        if !fields.isEmpty { members.append(("fields", Self.json(fields))) }
        return .object(members)
    }

    /// Fields as a JSON object with the keys sorted.
    public static func json(_ fields: [String: FieldValue]) -> JSONValue {
        .object(fields.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) })
    }
}

extension DecodedAdvertisement {
    /// The report's fields, its AD structures (`ad`), its beacons and, when it has none, the device sighting.
    public func json(includeReport: Bool = true) -> JSONValue {
        var members = includeReport ? report.jsonMembers : []
        members.append(("ad", advertisingData.json))
        members.append(("beacons", .array(beacons.map(\.json))))
        if beacons.isEmpty {
            let device = deviceObservation()
            var object: [(String, JSONValue)] = [("id", .string(device.beaconID))]
            object += device.fields.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) }
            members.append(("device", .object(object)))
        }
        return .object(members)
    }
}
