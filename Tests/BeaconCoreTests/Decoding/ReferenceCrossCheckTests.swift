import Testing

@testable import BeaconFormats
@testable import BeaconModel
@testable import BeaconTracking

#if canImport(Glibc)
import Glibc
#endif

/// Cross-check against the reference decoders Home Assistant uses (`bthome-ble`, `ruuvitag-ble`, `govee-ble`).
/// `scripts/reference-check.sh` runs them, pinned in a cached virtual environment, over their published test frames
/// and a few thousand generated ones, writes their decodings to a JSON file and runs this test with
/// `BEACONBRIDGE_REFERENCE_VECTORS` naming it. Without it (no PyPI) the test is skipped and the script says SKIP.
///
/// Per frame: the same readings under the same Home Assistant keys, the same values (within the reference's own
/// rounding), the same units, and the same frames rejected. Encrypted BTHome sequences run through one
/// `EncryptedCounterGuard` each, as the pipeline does (right key, wrong key, replayed counter, downgrade).
@Suite struct ReferenceCrossCheckTests {
    static let vectorsPath: String? = getenv("BEACONBRIDGE_REFERENCE_VECTORS").map { String(cString: $0) }

    /// A reading in comparable form.
    enum Reading: Equatable, CustomStringConvertible {
        case number(Double, unit: String?)
        case text(String, unit: String?)
        case flag(Bool)
        case event(String, [String: String])

        var description: String {
            switch self {
            case let .number(value, unit): "\(value) \(unit ?? "-")"
            case let .text(value, unit): "'\(value)' \(unit ?? "-")"
            case let .flag(value): "\(value)"
            case let .event(type, properties): "\(type) \(properties)"
            }
        }
    }

    /// Our fields of one beacon under the references' keys.
    static func readings(_ beacon: Beacon) -> [String: Reading] {
        var out: [String: Reading] = [:]
        func number(_ value: FieldValue) -> Double? {
            switch value {
            case let .int(value): Double(value)
            case let .double(value): value
            default: nil
            }
        }
        switch beacon.format {
        case "ruuvi":
            let keys = [
                "temperature_c": ("temperature", "°C"), "humidity_pct": ("humidity", "%"),
                "pressure_hpa": ("pressure", "hPa"), "battery_mv": ("voltage", "mV"),
                "movement_counter": ("movement_counter", nil),
                "acceleration_x_ms2": ("acceleration_x", "m/s²"), "acceleration_y_ms2": ("acceleration_y", "m/s²"),
                "acceleration_z_ms2": ("acceleration_z", "m/s²"),
                "acceleration_total_ms2": ("acceleration_total", "m/s²"),
            ]
            for (field, value) in beacon.fields {
                guard let (key, unit) = keys[field], let number = number(value) else { continue }
                out["sensor:" + key] = .number(number, unit: unit)
            }
        case "govee":
            let keys = [
                "temperature_c": ("temperature", "°C"), "humidity_pct": ("humidity", "%"),
                "battery_pct": ("battery", "%"),
            ]
            for (field, value) in beacon.fields {
                if let (key, unit) = keys[field], let number = number(value) {
                    out["sensor:" + key] = .number(number, unit: unit)
                }
                if field == "sensor_error", case let .bool(flag) = value { out["binary:sensor_error"] = .flag(flag) }
                if field == "model", case let .string(model) = value { out["model"] = .text(model, unit: nil) }
            }
        case "bthome":
            for (field, value) in beacon.fields {
                var base = Substring(field)
                var suffix = ""
                if let underscore = field.lastIndex(of: "_"), Int(field[field.index(after: underscore)...]) != nil,
                    !BTHome.objects.contains(where: { $0.name == field })
                {
                    base = field[..<underscore]
                    suffix = String(field[underscore...])
                }
                guard let object = BTHome.objects.first(where: { $0.name == base }), let key = object.key else {
                    continue
                }
                let unit = object.unit == "hPa" ? "mbar" : object.unit  // bthome-ble names hPa "mbar"
                switch (object.kind, value) {
                case let (.binary, .bool(flag)): out["binary:" + key + suffix] = .flag(flag)
                case let (.button, .string(type)): out["event:" + key + suffix] = .event(type, [:])
                case let (.dimmer, .string(type)):
                    let steps = beacon.fields["dimmer_steps" + suffix].flatMap(number).map { String(Int($0)) } ?? "?"
                    out["event:" + key + suffix] = .event(type, ["steps": steps])
                case let (.command, .string(type)):
                    var args = ""
                    if case let .string(hex)? = beacon.fields["command_args" + suffix] { args = hex }
                    out["event:" + key + suffix] = .event(type, ["args": args])
                case let (_, .string(text)): out["sensor:" + key + suffix] = .text(text, unit: unit)
                default:
                    if let number = number(value) { out["sensor:" + key + suffix] = .number(number, unit: unit) }
                }
            }
        default:
            break
        }
        return out
    }

    /// The reference's expectation in comparable form.
    static func expected(_ json: JSONValue) -> [String: Reading] {
        guard case let .object(members) = json else { return [:] }
        var out: [String: Reading] = [:]
        for (key, value) in members {
            switch value {
            case let .bool(flag): out[key] = .flag(flag)
            case let .string(text): out[key] = .text(text, unit: nil)
            case let .array(pair) where pair.count == 2:
                var unit: String?
                if case let .string(text) = pair[1] { unit = text }
                switch pair[0] {
                case let .int(number): out[key] = .number(Double(number), unit: unit)
                case let .double(number): out[key] = .number(number, unit: unit)
                case let .string(text):
                    if key.hasPrefix("event:"), case let .object(properties) = pair[1] {
                        var props: [String: String] = [:]
                        for (name, property) in properties {
                            switch property {
                            case let .int(number): props[name] = String(number)
                            case let .string(text): props[name] = text
                            default: props[name] = "\(property)"
                            }
                        }
                        out[key] = .event(text, props)
                    } else {
                        out[key] = .text(text, unit: unit)
                    }
                case let .bool(flag): out[key] = .flag(flag)
                default: break
                }
            default: break
            }
        }
        return out
    }

    /// How far our value may be from the reference's: the reference rounds Ruuvi readings to 2 decimals (and
    /// computes the total acceleration from the rounded axes); everything else must agree exactly.
    static func tolerance(format: String, key: String) -> Double {
        guard format == "ruuvi" else { return 1e-9 }
        if key == "sensor:acceleration_total" { return 0.011 }
        if key == "sensor:pressure" || key == "sensor:voltage" { return 1e-9 }
        return 0.005 + 1e-9
    }

    static func agree(_ ours: Reading, _ theirs: Reading, tolerance: Double) -> Bool {
        switch (ours, theirs) {
        case let (.number(a, unitA), .number(b, unitB)):
            return unitA == unitB && abs(a - b) <= tolerance * max(1, abs(b))
        default:
            return ours == theirs
        }
    }

    @Test(
        .enabled(if: vectorsPath != nil, "BEACONBRIDGE_REFERENCE_VECTORS not set (scripts/reference-check.sh sets it)"))
    func sameReadingsUnitsAndRejectionsAsTheReferenceDecoders() throws {
        let path = try #require(Self.vectorsPath)
        let bytes = try #require(DecodingFixtures.readFile(path), "cannot read \(path)")
        let document = try JSONValue(parsing: String(decoding: bytes, as: UTF8.self))
        guard case let .array(vectors)? = document["vectors"] else {
            Issue.record("no vectors in \(path)")
            return
        }
        #expect(vectors.count > 3000)

        var guards: [String: EncryptedCounterGuard] = [:]
        var mismatches: [String] = []
        var compared: [String: (accepted: Int, rejected: Int)] = [:]
        for vector in vectors {
            guard case let .string(format)? = vector["format"], case let .string(hex)? = vector["ad"],
                case let .string(addressText)? = vector["address"], let expect = vector["expect"]
            else {
                Issue.record("malformed vector \(vector)")
                continue
            }
            let source: String = if case let .string(text)? = vector["source"] { text } else { "?" }
            // Some published frames were captured on macOS, whose addresses are UUIDs: any address does for them.
            let address = BluetoothAddress(string: addressText) ?? BluetoothAddress(rawValue: 0xC0FF_EE00_1122)
            let data = DecodingFixtures.hex(hex)
            var keys = SensorKeys()
            if case let .string(keyHex)? = vector["key"] {
                let key = DecodingFixtures.hex(keyHex)
                keys.addBTHomeKey(key, for: address)
                // A frame that carries its MAC is looked up by that MAC.
                for structure in AdvertisingData(data).structures
                where structure.type == 0x16 && structure.range.count >= 9 {
                    let start = structure.range.lowerBound
                    if data[start] == 0xD2, data[start + 1] == 0xFC, data[start + 2] & 0x02 != 0 {
                        var mac: UInt64 = 0
                        for index in stride(from: start + 8, through: start + 3, by: -1) {
                            mac = mac << 8 | UInt64(data[index])
                        }
                        keys.addBTHomeKey(key, for: BluetoothAddress(rawValue: mac))
                    }
                }
            }
            let report = AdvertisingReport(
                timestamp: 1, eventType: 0x13, isExtended: false, address: address,
                addressType: .publicDevice, rssi: -60, txPower: nil, data: data)
            let decoded = BeaconDecoder(keys: keys).decode(report)
            var ours: [String: Reading] = [:]
            for (beacon, observation) in zip(decoded.beacons, decoded.observations(includeDevices: false))
            where beacon.format == format {
                if case let .string(sequence)? = vector["sequence"] {
                    var counterGuard = guards[sequence] ?? EncryptedCounterGuard()
                    let admitted = counterGuard.admit(observation)
                    guards[sequence] = counterGuard
                    if !admitted { continue }
                }
                ours.merge(Self.readings(beacon)) { first, _ in first }
            }
            var theirs = Self.expected(expect)
            // Documented difference: the Ruuvi protocol marks movement counter 255 "not available"; ruuvitag-ble
            // reports it as 255.
            if format == "ruuvi", theirs["sensor:movement_counter"] == .number(255, unit: nil),
                ours["sensor:movement_counter"] == nil
            {
                theirs["sensor:movement_counter"] = nil
            }
            // The model is compared where the reference names it without the device name's help (generated frames).
            if theirs["model"] == nil { ours["model"] = nil }
            var problems: [String] = []
            for key in Set(ours.keys).union(theirs.keys).sorted() {
                switch (ours[key], theirs[key]) {
                case let (mine?, reference?):
                    if !Self.agree(mine, reference, tolerance: Self.tolerance(format: format, key: key)) {
                        problems.append("\(key): ours \(mine), reference \(reference)")
                    }
                case let (mine?, nil): problems.append("\(key): ours \(mine), reference has none")
                case let (nil, reference?): problems.append("\(key): reference \(reference), ours has none")
                case (nil, nil): break
                }
            }
            if !problems.isEmpty, mismatches.count < 40 {
                mismatches.append("\(source) [\(hex)]: " + problems.joined(separator: "; "))
            }
            var tally = compared[format] ?? (0, 0)
            if theirs.isEmpty { tally.rejected += 1 } else { tally.accepted += 1 }
            compared[format] = tally
        }
        print(
            "reference cross-check: "
                + compared.sorted { $0.key < $1.key }
                .map { "\($0.key) \($0.value.accepted) decoded + \($0.value.rejected) rejected" }.joined(
                    separator: ", ")
                + ", \(mismatches.count) mismatching")
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(compared.keys.sorted() == ["bthome", "govee", "ruuvi"])
    }
}
