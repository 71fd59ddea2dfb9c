/// Recognises beacons in advertising reports: the enabled built-in formats and the user's layouts.
///
/// Every AD structure is offered to the formats that read its AD type, user layouts first (in configuration
/// order: a user's layout is the more specific intent) then the built-ins (in `BuiltinFormat` order); the first
/// format that matches a structure claims it.
/// One report can hold several beacons (e.g. an iBeacon and an Eddystone frame).
public struct BeaconDecoder: Sendable {
    /// Holds a layout by reference so that walking the format list copies one pointer, not the layout.
    final class LayoutReference: Sendable {
        let layout: BeaconLayout
        init(_ layout: BeaconLayout) { self.layout = layout }
    }

    enum FormatDecoder: Sendable {
        case layout(LayoutReference)
        case eddystoneURL, eddystoneTLM, appleOverflow

        func beacon(in bytes: [UInt8], _ structure: ADStructure, _ address: BluetoothAddress) -> Beacon? {
            switch self {
            case let .layout(reference): reference.layout.beacon(in: bytes, payload: structure.range, address: address)
            case .eddystoneURL: EddystoneURL.beacon(in: bytes, payload: structure.range, address: address)
            case .eddystoneTLM: EddystoneTLM.beacon(in: bytes, payload: structure.range, address: address)
            case .appleOverflow: AppleOverflow.beacon(in: bytes, payload: structure.range, address: address)
            }
        }

        /// Two bytes every match needs (offset in the AD payload and value), checked before the decoder runs.
        var quickCheck: QuickCheck {
            switch self {
            case let .layout(reference):
                let matchers = reference.layout.matchers
                let first = matchers.first.map { ($0.start, $0.bytes.first ?? 0) } ?? (0, 0)
                let last = matchers.last.map { ($0.start, $0.bytes.first ?? 0) } ?? first
                let minimum = matchers.map { $0.start + $0.bytes.count }.max() ?? 0
                return QuickCheck(adType: reference.layout.adType, offset1: first.0, byte1: first.1,
                                  offset2: last.0, byte2: last.1, minimumLength: minimum)
            case .eddystoneURL:
                return QuickCheck(adType: 0x16, offset1: 0, byte1: 0xAA, offset2: 2, byte2: EddystoneURL.frameType, minimumLength: 5)
            case .eddystoneTLM:
                return QuickCheck(adType: 0x16, offset1: 0, byte1: 0xAA, offset2: 2, byte2: EddystoneTLM.frameType, minimumLength: 4)
            case .appleOverflow:
                return QuickCheck(adType: 0xFF, offset1: 0, byte1: 0x4C, offset2: 2, byte2: AppleOverflow.overflowType, minimumLength: 19)
            }
        }
    }

    /// A plain-value pre-filter per format (no reference counting while scanning the list).
    struct QuickCheck: Sendable {
        var adType: UInt8
        var offset1: Int
        var byte1: UInt8
        var offset2: Int
        var byte2: UInt8
        var minimumLength: Int

        @inline(__always)
        func passes(_ bytes: [UInt8], _ structure: ADStructure) -> Bool {
            let base = structure.range.lowerBound
            return structure.type == adType && structure.range.count >= minimumLength
                && bytes[base + offset1] == byte1 && bytes[base + offset2] == byte2
        }
    }

    /// Formats reading manufacturer data (0xFF) and service data (0x16, 0x20, 0x21).
    let formats: [FormatDecoder]
    let checks: [QuickCheck]
    public let builtins: Set<BuiltinFormat>
    public let layouts: [BeaconLayout]

    /// - Parameters:
    ///   - builtins: the built-in formats to recognise (all by default).
    ///   - layouts: user formats, tried before the built-ins.
    public init(builtins: Set<BuiltinFormat> = Set(BuiltinFormat.allCases), layouts: [BeaconLayout] = []) {
        self.builtins = builtins
        self.layouts = layouts
        var formats: [FormatDecoder] = layouts.map { .layout(LayoutReference($0)) }
        for format in BuiltinFormat.allCases where builtins.contains(format) {
            switch format {
            case .eddystoneURL: formats.append(.eddystoneURL)
            case .eddystoneTLM: formats.append(.eddystoneTLM)
            case .appleOverflow: formats.append(.appleOverflow)
            default: if let layout = format.layout { formats.append(.layout(LayoutReference(layout))) }
            }
        }
        self.formats = formats
        checks = formats.map(\.quickCheck)
    }

    /// Builds a decoder from format settings. Throws the first invalid layout (validate settings first to
    /// report every problem).
    public init(settings: FormatSettings) throws(LayoutError) {
        var layouts: [BeaconLayout] = []
        for entry in settings.layouts { layouts.append(try BeaconLayout(name: entry.name, layout: entry.layout)) }
        self.init(builtins: settings.enabledBuiltins, layouts: layouts)
    }

    /// Parses the report's AD structures and recognises its beacons.
    public func decode(_ report: AdvertisingReport) -> DecodedAdvertisement {
        let data = AdvertisingData(report.data)
        return DecodedAdvertisement(report: report, advertisingData: data, beacons: beacons(in: data, address: report.address))
    }

    /// The beacons in parsed advertising data.
    public func beacons(in data: AdvertisingData, address: BluetoothAddress) -> [Beacon] {
        var found: [Beacon] = []
        forEachBeacon(in: data, address: address) { found.append($0) }
        return found
    }

    /// The observations of one report without keeping the intermediate `DecodedAdvertisement` (the daemon's
    /// path): the same values as `decode(report).observations(includeDevices:)`.
    public func observations(of report: AdvertisingReport, includeDevices: Bool) -> [Observation] {
        let data = AdvertisingData(report.data)
        var observations: [Observation] = []
        var name: String?
        var nameRead = false
        // Plain locals, so that the closure does not copy the whole report.
        let timestamp = report.timestamp, address = report.address, addressType = report.addressType
        let rssi = report.rssi.map { Int($0) }
        forEachBeacon(in: data, address: address) { beacon in
            if !nameRead { name = data.localName; nameRead = true }
            observations.append(Observation(timestamp: timestamp, beaconID: beacon.beaconID, format: beacon.format,
                                            identifiers: beacon.identifiers, address: address,
                                            addressType: addressType, rssi: rssi,
                                            measuredPower: beacon.measuredPower, name: name, fields: beacon.fields))
        }
        if observations.isEmpty, includeDevices {
            observations.append(DecodedAdvertisement(report: report, advertisingData: data, beacons: []).deviceObservation())
        }
        return observations
    }

    /// Calls `body` with each beacon in parsed advertising data, in AD structure order.
    @inline(__always)
    func forEachBeacon(in data: AdvertisingData, address: BluetoothAddress, _ body: (consuming Beacon) -> Void) {
        let bytes = data.bytes
        for structure in data.structures {
            let type = structure.type
            guard type == AdvertisingData.manufacturerSpecific || type == AdvertisingData.serviceData16
                || type == AdvertisingData.serviceData32 || type == AdvertisingData.serviceData128 else { continue }
            for index in checks.indices where checks[index].passes(bytes, structure) {
                if let beacon = formats[index].beacon(in: bytes, structure, address) { body(beacon); break }
            }
        }
    }
}
