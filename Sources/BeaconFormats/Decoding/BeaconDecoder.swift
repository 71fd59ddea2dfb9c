import BeaconModel

/// Recognises beacons in advertising reports: the user's layouts and the enabled built-in formats
/// (`FormatRegistry`).
///
/// Every AD structure is offered to the formats that read its AD type, user layouts first (in configuration
/// order: a user's layout is the more specific intent) then the built-ins (in `FormatRegistry.builtins` order);
/// the first format that matches a structure claims it. One report can hold several beacons (e.g. an iBeacon
/// and an Eddystone frame).
public struct BeaconDecoder: Sendable {
    /// Holds a layout by reference so that walking the format list copies one pointer, not the layout.
    final class LayoutReference: Sendable {
        package let layout: BeaconLayout
        package init(_ layout: BeaconLayout) { self.layout = layout }
    }

    enum FormatDecoder: Sendable {
        case layout(LayoutReference)
        case code(@Sendable (borrowing BeaconFormat.FrameInput) -> Beacon?)

        @inline(__always)
        package func beacon(
            in bytes: [UInt8], _ structure: ADStructure, _ address: BluetoothAddress, _ keys: SensorKeys
        )
            -> Beacon?
        {
            switch self {
            case let .layout(reference): reference.layout.beacon(in: bytes, payload: structure.range, address: address)
            case let .code(decode):
                decode(BeaconFormat.FrameInput(bytes: bytes, payload: structure.range, address: address, keys: keys))
            }
        }

        static func quickCheck(_ layout: BeaconLayout) -> BeaconFormat.QuickCheck {
            let matchers = layout.matchers
            let first = matchers.first.flatMap { m in m.bytes.first.map { (m.start, $0) } } ?? (0, 0)
            let last = matchers.last.flatMap { m in m.bytes.last.map { (m.start + m.bytes.count - 1, $0) } } ?? first
            let minimum = matchers.map { $0.start + $0.bytes.count }.max() ?? 0
            return BeaconFormat.QuickCheck(
                adType: layout.adType, offset1: first.0, byte1: first.1,
                offset2: last.0, byte2: last.1, minimumLength: minimum)
        }
    }

    /// Formats reading manufacturer data (0xFF) and service data (0x16, 0x20, 0x21), with their pre-filters.
    let formats: [FormatDecoder]
    package let checks: [BeaconFormat.QuickCheck]
    public let builtins: [BeaconFormat]
    public let layouts: [BeaconLayout]
    /// Per-device decryption keys (BTHome bind keys).
    package let keys: SensorKeys

    /// - Parameters:
    ///   - builtins: the built-in formats to recognise (all by default), tried in registry order.
    ///   - layouts: user formats, tried before the built-ins.
    ///   - keys: per-device decryption keys.
    public init(
        builtins: [BeaconFormat] = FormatRegistry.builtins, layouts: [BeaconLayout] = [],
        keys: SensorKeys = SensorKeys()
    ) {
        self.builtins =
            FormatRegistry.builtins.filter { builtins.contains($0) }
            + builtins.filter { !FormatRegistry.builtins.contains($0) }
        self.layouts = layouts
        self.keys = keys
        var formats: [FormatDecoder] = layouts.map { .layout(LayoutReference($0)) }
        var checks = layouts.map(FormatDecoder.quickCheck)
        for format in self.builtins {
            switch format.recogniser {
            case let .layout(layout):
                formats.append(.layout(LayoutReference(layout)))
                checks.append(FormatDecoder.quickCheck(layout))
            case let .code(check, decode):
                formats.append(.code(decode))
                checks.append(check)
            }
        }
        self.formats = formats
        self.checks = checks
    }

    /// Builds a decoder from format settings. Throws the first invalid layout (validate settings first to
    /// report every problem).
    /// The BTHome bind keys are the ones loaded into the settings (`formats.bthome_keys`) unless `keys` is given.
    public init(settings: FormatSettings, keys: SensorKeys? = nil) throws(LayoutError) {
        var layouts: [BeaconLayout] = []
        for entry in settings.layouts { layouts.append(try BeaconLayout(name: entry.name, layout: entry.layout)) }
        self.init(builtins: settings.enabledBuiltins, layouts: layouts, keys: keys ?? settings.sensorKeys)
    }

    /// Parses the report's AD structures and recognises its beacons.
    public func decode(_ report: AdvertisingReport) -> DecodedAdvertisement {
        let data = AdvertisingData(report.data)
        return DecodedAdvertisement(
            report: report, advertisingData: data, beacons: beacons(in: data, address: report.address))
    }

    /// The beacons in parsed advertising data.
    public func beacons(in data: AdvertisingData, address: BluetoothAddress) -> [Beacon] {
        var found: [Beacon] = []
        forEachBeacon(in: data, address: address) { found.append($0) }
        return found
    }

    /// The observations of one report without keeping the intermediate `DecodedAdvertisement`: the same values as
    /// `decode(report).observations(includeDevices:)`. The daemon's decode path (`GatewayPipeline` calls the
    /// variant below with the advertising data it has parsed; the decode bench calls this one).
    public func observations(of report: AdvertisingReport, includeDevices: Bool) -> [Observation] {
        observations(of: report, in: AdvertisingData(report.data), includeDevices: includeDevices)
    }

    /// The observations of `report`, whose parsed advertising data is `data`. `addressFrames: false` leaves out the
    /// beacons identified by the sender's address (`Beacon.isExtraFrame`: TLM, URL, sensors), as the pipeline does
    /// for an unresolved private address.
    public func observations(
        of report: AdvertisingReport, in data: AdvertisingData, includeDevices: Bool,
        addressFrames: Bool = true
    ) -> [Observation] {
        var observations: [Observation] = []
        var name: String?
        var nameRead = false
        // Plain locals, so that the closure does not copy the whole report.
        let timestamp = report.timestamp
        let address = report.address
        let addressType = report.addressType
        let rssi = report.rssi.map { Int($0) }
        var found = false
        forEachBeacon(in: data, address: address) { beacon in
            found = true
            guard addressFrames || !beacon.isExtraFrame else { return }
            if !nameRead {
                name = data.localName
                nameRead = true
            }
            observations.append(
                Observation(
                    timestamp: timestamp, beaconID: beacon.beaconID, format: beacon.format,
                    identifiers: beacon.identifiers, address: address,
                    addressType: addressType, rssi: rssi,
                    measuredPower: beacon.measuredPower, name: name, fields: beacon.fields))
        }
        if !found, includeDevices {
            observations.append(
                DecodedAdvertisement(report: report, advertisingData: data, beacons: []).deviceObservation())
        }
        return observations
    }

    /// Calls `body` with each beacon in parsed advertising data, in AD structure order.
    @inline(__always)
    func forEachBeacon(in data: AdvertisingData, address: BluetoothAddress, _ body: (consuming Beacon) -> Void) {
        let bytes = data.bytes
        for structure in data.structures {
            let type = structure.type
            guard
                type == AdvertisingData.manufacturerSpecific || type == AdvertisingData.serviceData16
                    || type == AdvertisingData.serviceData32 || type == AdvertisingData.serviceData128
            else { continue }
            for index in checks.indices where checks[index].passes(bytes, structure) {
                if let beacon = formats[index].beacon(in: bytes, structure, address, keys) {
                    body(beacon)
                    break
                }
            }
        }
    }
}
