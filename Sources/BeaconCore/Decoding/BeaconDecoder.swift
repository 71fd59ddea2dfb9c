/// Recognises beacons in advertising reports: the enabled built-in formats and the user's layouts.
///
/// Every AD structure is offered to the formats that read its AD type, built-ins first (in `BuiltinFormat`
/// order) then user layouts in configuration order; the first format that matches a structure claims it.
/// One report can hold several beacons (e.g. an iBeacon and an Eddystone frame).
public struct BeaconDecoder: Sendable {
    enum FormatDecoder: Sendable {
        case layout(BeaconLayout)
        case eddystoneURL, eddystoneTLM, appleOverflow

        func beacon(in bytes: [UInt8], _ structure: ADStructure, _ address: BluetoothAddress) -> Beacon? {
            switch self {
            case let .layout(layout): layout.beacon(in: bytes, payload: structure.range, address: address)
            case .eddystoneURL: EddystoneURL.beacon(in: bytes, payload: structure.range, address: address)
            case .eddystoneTLM: EddystoneTLM.beacon(in: bytes, payload: structure.range, address: address)
            case .appleOverflow: AppleOverflow.beacon(in: bytes, payload: structure.range, address: address)
            }
        }
    }

    /// Formats reading manufacturer data (0xFF) and service data (0x16, 0x20, 0x21).
    let manufacturerFormats: [FormatDecoder]
    let serviceFormats: [(adType: UInt8, decoder: FormatDecoder)]
    public let builtins: Set<BuiltinFormat>
    public let layouts: [BeaconLayout]

    /// - Parameters:
    ///   - builtins: the built-in formats to recognise (all by default).
    ///   - layouts: user formats, tried after the built-ins.
    public init(builtins: Set<BuiltinFormat> = Set(BuiltinFormat.allCases), layouts: [BeaconLayout] = []) {
        self.builtins = builtins
        self.layouts = layouts
        var manufacturer: [FormatDecoder] = []
        var service: [(UInt8, FormatDecoder)] = []
        for format in BuiltinFormat.allCases where builtins.contains(format) {
            switch format {
            case .eddystoneURL: service.append((0x16, .eddystoneURL))
            case .eddystoneTLM: service.append((0x16, .eddystoneTLM))
            case .appleOverflow: manufacturer.append(.appleOverflow)
            default:
                guard let layout = format.layout else { continue }
                if layout.adType == 0xFF { manufacturer.append(.layout(layout)) } else { service.append((layout.adType, .layout(layout))) }
            }
        }
        for layout in layouts {
            if layout.adType == 0xFF { manufacturer.append(.layout(layout)) } else { service.append((layout.adType, .layout(layout))) }
        }
        manufacturerFormats = manufacturer
        serviceFormats = service
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
        let bytes = data.bytes
        for structure in data.structures {
            if structure.type == AdvertisingData.manufacturerSpecific {
                for format in manufacturerFormats {
                    if let beacon = format.beacon(in: bytes, structure, address) { found.append(beacon); break }
                }
            } else if structure.type == 0x16 || structure.type == 0x20 || structure.type == 0x21 {
                for (adType, format) in serviceFormats where adType == structure.type {
                    if let beacon = format.beacon(in: bytes, structure, address) { found.append(beacon); break }
                }
            }
        }
        return found
    }
}
