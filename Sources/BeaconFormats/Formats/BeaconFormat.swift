import BeaconModel

/// One beacon format the gateway knows without configuration: how to recognise it cheaply, how to decode it,
/// the shape of its beacon ids, its fields with their units, and a synthetic frame for tests and the simulator.
///
/// Every format lives in one file (`Formats/<Format>.swift`, a `static let` on `BeaconFormat`) and is listed
/// once in `FormatRegistry.builtins`; nothing else needs to change to add one. Formats the layout grammar can
/// express are defined by their layout, so built-in and user formats share one engine.
public struct BeaconFormat: Sendable {
    /// What a field is, for documentation and Home Assistant discovery.
    public enum FieldKind: Sendable, Equatable {
        /// A measured value (a `sensor`), with Home Assistant's `device_class` when one fits.
        case reading(deviceClass: String?)
        /// An on/off state (a `binary_sensor`), with its `device_class`.
        case binary(deviceClass: String?)
        /// A momentary event (button presses, dimmer turns): a device trigger, not a state.
        case event
        /// Identity and bookkeeping (URL, counters, raw bytes, versions): no entity.
        case info
    }

    /// A field a format may put into `Beacon.fields`.
    public struct Field: Sendable, Equatable {
        public var name: String
        /// The unit of the value (`°C`, `%`, `hPa`, `mV`, `dBm`, ...), nil when it has none.
        public var unit: String?
        public var kind: FieldKind
        public var summary: String

        public init(_ name: String, unit: String? = nil, _ kind: FieldKind = .info, _ summary: String) {
            self.name = name
            self.unit = unit
            self.kind = kind
            self.summary = summary
        }
    }

    /// The shape of the format's beacon ids (docs/beacon-ids.md), used to check ids written in the configuration.
    public enum IDShape: Sendable, Equatable {
        /// `<format>:<uuid>:<major>:<minor>` (iBeacon, AltBeacon).
        case uuidMajorMinor
        /// `<format>` then one lower-case hex identifier per byte count, e.g. `[10, 6]` for Eddystone-UID.
        case hex([Int])
        /// `<format>:<AA:BB:CC:DD:EE:FF>`: identified by the sending device (or the address the frame carries).
        case address
    }

    /// What a format's code decoder reads: one AD structure payload (`bytes[payload]`, manufacturer data from the
    /// company code or service data from the UUID) of a report from `address`, and the configured keys.
    public struct FrameInput {
        public var bytes: [UInt8]
        public var payload: Range<Int>
        public var address: BluetoothAddress
        public var keys: SensorKeys
    }

    /// A plain-value pre-filter: the AD type, two bytes every match needs (offset in the payload and value) and
    /// a minimum payload length, checked before the decoder runs.
    public struct QuickCheck: Sendable, Equatable {
        public var adType: UInt8
        public var offset1: Int
        public var byte1: UInt8
        public var offset2: Int
        public var byte2: UInt8
        public var minimumLength: Int

        public init(adType: UInt8, offset1: Int, byte1: UInt8, offset2: Int, byte2: UInt8, minimumLength: Int) {
            self.adType = adType
            self.offset1 = offset1
            self.byte1 = byte1
            self.offset2 = offset2
            self.byte2 = byte2
            self.minimumLength = max(minimumLength, offset1 + 1, offset2 + 1)
        }

        /// Manufacturer data of one company (little endian on the wire), at least `minimumLength` bytes.
        public static func company(_ id: UInt16, minimumLength: Int) -> QuickCheck {
            QuickCheck(
                adType: 0xFF, offset1: 0, byte1: UInt8(id & 0xFF), offset2: 1, byte2: UInt8(id >> 8),
                minimumLength: minimumLength)
        }

        /// Service data of one 16-bit UUID (little endian on the wire), at least `minimumLength` bytes.
        public static func service16(_ uuid: UInt16, minimumLength: Int) -> QuickCheck {
            QuickCheck(
                adType: 0x16, offset1: 0, byte1: UInt8(uuid & 0xFF), offset2: 1, byte2: UInt8(uuid >> 8),
                minimumLength: minimumLength)
        }

        @inline(__always)
        func passes(_ bytes: [UInt8], _ structure: ADStructure) -> Bool {
            let base = structure.range.lowerBound
            return structure.type == adType && structure.range.count >= minimumLength
                && bytes[base + offset1] == byte1 && bytes[base + offset2] == byte2
        }
    }

    enum Recogniser: Sendable {
        case layout(BeaconLayout)
        case code(QuickCheck, @Sendable (borrowing FrameInput) -> Beacon?)
    }

    /// Format name: the `format` of its beacons, the prefix of their ids, its name in `formats.enabled`.
    public let name: String
    public let summary: String
    public let idShape: IDShape
    public let fields: [Field]
    /// AD bytes of one advertising report carrying a typical frame of this format (tests, simulator, fuzz seeds).
    public let syntheticFrame: [UInt8]
    let recogniser: Recogniser

    /// A format defined by a layout in the grammar.
    package init(
        name: String, summary: String, idShape: IDShape, fields: [Field] = [], syntheticFrame: String,
        layout: BeaconLayout
    ) {
        self.name = name
        self.summary = summary
        self.idShape = idShape
        self.fields = fields
        self.syntheticFrame = Self.hexBytes(syntheticFrame)
        self.recogniser = .layout(layout)
    }

    /// A format decoded by code.
    package init(
        name: String, summary: String, idShape: IDShape, fields: [Field], syntheticFrame: String,
        quickCheck: QuickCheck, decode: @escaping @Sendable (borrowing FrameInput) -> Beacon?
    ) {
        self.name = name
        self.summary = summary
        self.idShape = idShape
        self.fields = fields
        self.syntheticFrame = Self.hexBytes(syntheticFrame)
        self.recogniser = .code(quickCheck, decode)
    }

    /// Bytes of a hex literal written in a format's file (spaces allowed); a bad digit is a programmer error.
    package static func hexBytes(_ text: String) -> [UInt8] {
        let digits = text.utf8.filter { $0 != 0x20 }.map { byte -> UInt8 in
            switch byte {
            case 0x30...0x39: return byte - 0x30
            case 0x61...0x66: return byte - 0x61 + 10
            case 0x41...0x46: return byte - 0x41 + 10
            default: preconditionFailure("bad hex digit in a built-in frame: \(text)")
            }
        }
        precondition(digits.count % 2 == 0, "odd hex length in a built-in frame: \(text)")
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    /// The layout string of a format defined in the grammar, nil for formats decoded by code.
    public var layoutString: String? {
        if case let .layout(layout) = recogniser { return layout.layout }
        return nil
    }

    /// The field called `name`; a trailing `_<n>` (the numbering of repeated objects) is ignored.
    public func field(named name: String) -> Field? {
        if let field = fields.first(where: { $0.name == name }) { return field }
        guard let underscore = name.lastIndex(of: "_"), Int(name[name.index(after: underscore)...]) != nil else {
            return nil
        }
        let base = name[..<underscore]
        return fields.first { $0.name == base }
    }
}

extension BeaconFormat: Equatable, Hashable {
    public static func == (lhs: BeaconFormat, rhs: BeaconFormat) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
