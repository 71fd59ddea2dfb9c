/// A beacon format in the Android Beacon Library's layout grammar, e.g. iBeacon
/// `m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24`.
///
/// Terms (comma separated):
/// - `m:a-b=hex` bytes a..b must equal hex (as written, byte by byte);
/// - `s:0-b=hex` service UUID of a service-data beacon (2, 4 or 16 bytes; hex written as the UUID reads,
///   matched little endian as on the wire); without an `s` term the layout reads manufacturer data;
/// - `i:a-b` identifier, `d:a-b` data field, both with optional suffixes `l` (little endian) and `v`
///   (variable length: ends at b or at the end of the PDU, whichever is first);
/// - `p:a-b` measured power (signed), `p:a-b:c` the same plus a correction of c dB, `p:-:c` none transmitted,
///   c is the default;
/// - `x` an extra frame: no identifiers, identified by the sending device's address.
///
/// Offsets count from the start of the manufacturer data (the company code is bytes 0-1) or of the service
/// data (the service UUID is bytes 0-1 for a 16-bit UUID). A match, identifier or power term that runs past the
/// PDU makes the match fail; a data field past the PDU is left out of the beacon's fields.
public struct BeaconLayout: Sendable, Equatable {
    /// An inclusive byte range of the PDU with its suffixes.
    public struct ByteField: Sendable, Equatable {
        public var start: Int
        public var end: Int
        public var littleEndian: Bool
        public var variableLength: Bool
        public var length: Int { end - start + 1 }
    }

    public enum Power: Sendable, Equatable {
        /// Read from the PDU (signed), plus `correction` dB.
        case field(ByteField, correction: Int)
        /// Not transmitted; this default applies.
        case fixed(Int)
    }

    struct Matcher: Sendable, Equatable {
        package var start: Int
        package var bytes: [UInt8]
    }

    /// Largest offset an AD structure payload can have (a length byte covers at most 254 payload bytes).
    public static let maxOffset = 253

    public let name: String
    public let layout: String
    /// The AD type this layout reads: 0xFF manufacturer data, 0x16/0x20/0x21 service data.
    public let adType: UInt8
    /// The service UUID of a service-data layout, nil for manufacturer data.
    public let serviceUUID: ServiceUUID?
    public let identifiers: [ByteField]
    public let dataFields: [ByteField]
    public let power: Power?
    public let isExtraFrame: Bool
    /// `m` and `s` terms, in layout order (the `s` UUID stored in wire order).
    let matchers: [Matcher]
    /// Built-in formats only: render every identifier as 0x-hex (e.g. a 16-byte Exposure Notification RPI).
    var hexIdentifiers = false
    /// Built-in formats only: names of the data fields (else data1, data2, ...) and hex rendering.
    var dataFieldNames: [String] = []
    var hexDataFields = false
    /// Built-in formats only: also keep the transmitted power before the correction as this field (Eddystone
    /// sends its power at 0 m; `measuredPower` is the derived 1 m value).
    var rawPowerFieldName: String?

    /// Parses a layout. Throws `LayoutError` naming the first offending term.
    public init(name: String, layout: String) throws(LayoutError) {
        self.name = name
        self.layout = layout
        var parser = LayoutTermParser()
        let terms = layout.split(separator: ",", omittingEmptySubsequences: false)
        for (index, term) in terms.enumerated() {
            try parser.add(term: term.filter { !$0.isWhitespace }, number: index + 1)
        }
        let result = try parser.finish(termCount: terms.count, lastTerm: String(terms.last ?? ""))
        adType = result.adType
        serviceUUID = result.serviceUUID
        identifiers = result.identifiers
        dataFields = result.dataFields
        power = result.power
        isExtraFrame = result.isExtraFrame
        matchers = result.matchers
    }

    /// A built-in layout with rendering options the grammar does not express.
    package init(
        builtin name: String, layout: String, hexIdentifiers: Bool = false, dataFieldNames: [String] = [],
        hexDataFields: Bool = false, rawPowerFieldName: String? = nil
    ) {
        do {
            try self.init(name: name, layout: layout)
        } catch {
            preconditionFailure("built-in layout \(name) is invalid: \(error)")
        }
        self.hexIdentifiers = hexIdentifiers
        self.dataFieldNames = dataFieldNames
        self.hexDataFields = hexDataFields
        self.rawPowerFieldName = rawPowerFieldName
    }
}
