import BeaconEvents
import BeaconModel
import TestSupport
import Testing

/// The payloads the encoder writes into its byte buffer are byte for byte the documented `JSONValue` ones.
@Suite struct EventPayloadWritingTests {
    static let names: [String?] = [
        nil, "Kitchen", "quote \" back\\slash", "tab\tnew\nline\r\u{01}\u{1F}", "Küche ☕️ 🚪", "",
    ]
    static let doubles: [Double?] = [
        nil, 0, -0.0, 1.5, -73.25, 0.004999, 12.345678, 1e15, 1e-7, .nan, .infinity, 1_700_000_000.123456,
    ]

    static func beacon(_ index: Int) -> BeaconSnapshot {
        let fields: [String: FieldValue] =
            index % 3 == 0
            ? [:]
            : [
                "battery_mv": .int(Int64(3000 - index)), "temperature_c": .double(Double(index) / 7),
                "url": .string("https://e.x/\"q\""),
                "moving": .bool(index % 2 == 0), "raw": .ints([1, -2, 300]),
            ]
        return BeaconSnapshot(
            beaconID: "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:\(index)", format: "ibeacon",
            identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "1", String(index)],
            address: BluetoothAddress(rawValue: 0xC0_FFEE_000000 | UInt64(index)),
            name: names[index % names.count], rssi: index % 4 == 0 ? nil : -40 - index,
            smoothedRSSI: doubles[index % doubles.count].map { $0 - 60 },
            distance: doubles[(index + 3) % doubles.count], measuredPower: index % 5 == 0 ? nil : -59,
            reportRate: doubles[(index + 5) % doubles.count] ?? 0, lastSeen: 1_700_000_000 + Double(index) / 3,
            fields: fields)
    }

    static func head(_ index: Int, _ kind: EventKind) -> EventPayload.Head {
        EventPayload.Head(
            id: "gw-\(index)", gatewayID: "gw", sequence: UInt64(index) * 1_000_003, kind: kind,
            time: 1_700_000_000 + Double(index) * 0.137)
    }

    static func written(_ write: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter(capacity: 16)
        writer.reset()
        write(&writer)
        return writer.text
    }

    @Test(arguments: 0..<36) func sightingPresenceAndRegionMatchTheTreeSerialization(index: Int) {
        let beacon = Self.beacon(index)
        let sighting = SightingEvent(time: 1_700_000_000 + Double(index), beacon: beacon)
        let sightingHead = Self.head(index, .sighting)
        #expect(
            Self.written { EventPayload.writeSighting(sighting, head: sightingHead, to: &$0) }
                == EventPayload.sighting(sighting, head: sightingHead.members).serialized)

        let presence = PresenceEvent(time: 1_700_000_001, state: index % 2 == 0 ? .seen : .away, beacon: beacon)
        let presenceHead = Self.head(index, .presence)
        #expect(
            Self.written { EventPayload.writePresence(presence, head: presenceHead, to: &$0) }
                == EventPayload.presence(presence, head: presenceHead.members).serialized)

        let kinds: [RegionEvent.Kind] = [.enter, .exit, .state]
        let states: [RegionState] = [.inside, .outside, .unknown]
        let region = RegionEvent(
            kind: kinds[index % 3], time: 1_700_000_002, region: Self.names[index % Self.names.count] ?? "desk",
            beaconID: beacon.beaconID, state: states[(index / 3) % 3],
            since: index % 2 == 0 ? nil : 1_699_999_990.5, beacon: index % 4 == 1 ? nil : beacon)
        let regionHead = Self.head(index, .region)
        #expect(
            Self.written { EventPayload.writeRegion(region, head: regionHead, to: &$0) }
                == EventPayload.region(region, head: regionHead.members).serialized)
    }

    @Test func integersAtTheLimitsAndNestedValuesMatch() {
        let values: [JSONValue] = [
            .int(.min), .int(.max), .int(0), .int(-1), .double(-1e14), .double(123_456_789_012_345),
            .array([]), .object([]),
            .array([.null, .bool(true), .bool(false), .object([("a", .array([.int(1), .string("x")]))])]),
        ]
        for value in values {
            #expect(Self.written { $0.value(value) } == value.serialized)
        }
    }

    /// JSONWriter writes short decimals itself (`appendShortDecimal`): the text must be exactly what
    /// `description` gives (JSONValue's rule) for every double, short or not.
    @Test(.ownThread) func doublesAreWrittenAsTheirDescription() {
        func reference(_ value: Double) -> String {
            guard value.isFinite else { return "null" }
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return value.description
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {  // xorshift64*: fixed seed, same values every run
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
        var values: [Double] = [
            0.1, 0.2, 0.1 + 0.2, 1e-4, 1.5e-4, 9.99e-5, 0.001, 0.5, -0.5, 2.675, 1e15 - 0.5, 1e14 + 0.25,
            123_456_789.123, 1_796_294_306.57915, -63.4, 0.07, 4_503_599_627_370_495.5, .nan, .infinity, -0.0,
            .ulpOfOne, 1 - .ulpOfOne, 1 + .ulpOfOne, .leastNormalMagnitude, .greatestFiniteMagnitude,
        ]
        for _ in 0..<20_000 {
            let x = (unit() - 0.5) * 400
            values.append((x * 10).rounded() / 10)  // a smoothed RSSI
            values.append((x * 100).rounded() / 100)  // a distance, a rate
            values.append(1_700_000_000 + (unit() * 1e6 * 1e6).rounded() / 1e6)  // a capture time in microseconds
            values.append(x)  // anything: mostly the long form
            values.append(unit() * 1e-3)  // small, around the exponent form's threshold
            values.append(Double(bitPattern: next()))  // any bit pattern
        }
        var mismatches: [String] = []
        for value in values {
            let written = Self.written { $0.double(value) }
            if written != reference(value) { mismatches.append("\(reference(value)) written as \(written)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
    }

    @Test func theBufferIsReusedAcrossPayloads() {
        var writer = JSONWriter()
        writer.value(.object([("a", .int(1))]))
        writer.reset()
        writer.value(.array([.int(2)]))
        #expect(writer.text == "[2]")
    }
}
