/// Parses the terms of a layout string one by one (see `BeaconLayout`) and checks the whole at the end.
struct LayoutTermParser {
    package struct Result {
        var adType: UInt8
        var serviceUUID: ServiceUUID?
        package var identifiers: [BeaconLayout.ByteField]
        var dataFields: [BeaconLayout.ByteField]
        package var power: BeaconLayout.Power?
        var isExtraFrame: Bool
        var matchers: [BeaconLayout.Matcher]
    }

    private var matchers: [BeaconLayout.Matcher] = []
    private var identifiers: [BeaconLayout.ByteField] = []
    private var dataFields: [BeaconLayout.ByteField] = []
    private var power: BeaconLayout.Power?
    private var serviceUUID: ServiceUUID?
    private var adType: UInt8 = 0xFF
    private var isExtraFrame = false
    private var firstIdentifier: (Int, String)?

    package mutating func add(term: String, number: Int) throws(LayoutError) {
        func fail(_ reason: String) -> LayoutError { LayoutError(termNumber: number, term: term, reason: reason) }
        if term == "x" {
            isExtraFrame = true
            return
        }
        let chars = Array(term.utf8)
        guard !chars.isEmpty else { throw fail("empty term") }
        guard chars.count >= 3, chars[1] == UInt8(ascii: ":") else {
            throw fail("expected '<type>:<start>-<end>' (types m, s, i, d, p) or 'x'")
        }
        let body = String(decoding: chars[2...], as: UTF8.self)
        switch chars[0] {
        case UInt8(ascii: "m"):
            let (field, hex) = try Self.rangeWithValue(body, fail)
            matchers.append(BeaconLayout.Matcher(start: field.start, bytes: hex))
        case UInt8(ascii: "s"):
            guard serviceUUID == nil else { throw fail("a layout has at most one service UUID term") }
            let (field, hex) = try Self.rangeWithValue(body, fail)
            guard field.start == 0 else { throw fail("the service UUID starts the service data: offset must be 0") }
            let wire = Array(hex.reversed())
            switch hex.count {
            case 2: adType = 0x16
            case 4: adType = 0x20
            case 16: adType = 0x21
            default: throw fail("a service UUID has 2, 4 or 16 bytes, not \(hex.count)")
            }
            serviceUUID = ServiceUUID(littleEndian: wire, 0..<wire.count)
            matchers.append(BeaconLayout.Matcher(start: 0, bytes: wire))
        case UInt8(ascii: "i"):
            identifiers.append(try Self.range(body, suffixes: "lv", fail))
            if firstIdentifier == nil { firstIdentifier = (number, term) }
        case UInt8(ascii: "d"):
            dataFields.append(try Self.range(body, suffixes: "lv", fail))
        case UInt8(ascii: "p"):
            guard power == nil else { throw fail("a layout has at most one power term") }
            power = try Self.power(body, fail)
        default:
            throw fail("unknown term type '\(String(decoding: chars[0...0], as: UTF8.self))' (use m, s, i, d, p or x)")
        }
    }

    package func finish(termCount: Int, lastTerm: String) throws(LayoutError) -> Result {
        guard !matchers.isEmpty else {
            throw LayoutError(
                termNumber: termCount, term: lastTerm,
                reason: "a layout needs an 'm' or 's' term to recognise its beacons")
        }
        if isExtraFrame, let (number, term) = firstIdentifier {
            throw LayoutError(termNumber: number, term: term, reason: "an extra frame ('x') has no identifiers")
        }
        if !isExtraFrame && identifiers.isEmpty {
            throw LayoutError(
                termNumber: termCount, term: lastTerm,
                reason: "a layout needs at least one 'i' term (or 'x' for an extra frame)")
        }
        return Result(
            adType: adType, serviceUUID: serviceUUID, identifiers: identifiers, dataFields: dataFields,
            power: power, isExtraFrame: isExtraFrame, matchers: matchers)
    }

    private static func number(_ text: Substring, _ fail: (String) -> LayoutError) throws(LayoutError) -> Int {
        guard !text.isEmpty, text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text)
        else {
            throw fail("'\(text)' is not an offset")
        }
        guard value <= BeaconLayout.maxOffset else {
            throw fail("offset \(value) is past the largest AD payload (\(BeaconLayout.maxOffset))")
        }
        return value
    }

    /// "a-b" with optional suffix letters out of `suffixes`.
    private static func range(
        _ text: String, suffixes: String,
        _ fail: (String) -> LayoutError
    ) throws(LayoutError) -> BeaconLayout.ByteField {
        var core = Substring(text)
        var littleEndian = false
        var variable = false
        while let last = core.last, last.isLetter {
            guard suffixes.contains(last) else { throw fail("unknown suffix '\(last)'") }
            if last == "l" { littleEndian = true } else { variable = true }
            core = core.dropLast()
        }
        let parts = core.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw fail("expected a range '<start>-<end>'") }
        let start = try number(parts[0], fail)
        let end = try number(parts[1], fail)
        guard start <= end else { throw fail("range ends (\(end)) before it starts (\(start))") }
        return BeaconLayout.ByteField(start: start, end: end, littleEndian: littleEndian, variableLength: variable)
    }

    /// "a-b=hex" with exactly (b - a + 1) bytes of hex.
    private static func rangeWithValue(_ text: String, _ fail: (String) -> LayoutError)
        throws(LayoutError) -> (BeaconLayout.ByteField, [UInt8])
    {
        let parts = text.split(separator: "=", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw fail("expected '<start>-<end>=<hex>'") }
        let field = try range(String(parts[0]), suffixes: "", fail)
        let digits = Array(parts[1].utf8)
        guard digits.count == field.length * 2 else {
            throw fail(
                "the value needs \(field.length * 2) hex digits for \(field.length) byte(s), got \(digits.count)")
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
                throw fail("'\(parts[1])' is not hex")
            }
            bytes.append(high << 4 | low)
        }
        return (field, bytes)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x41...0x46: digit - 0x41 + 10
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }

    /// "a-b", "a-b:c" or "-:c".
    private static func power(_ text: String, _ fail: (String) -> LayoutError) throws(LayoutError) -> BeaconLayout.Power
    {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw fail("expected 'p:<start>-<end>[:<correction>]' or 'p:-:<default>'") }
        var dBm: Int?
        if parts.count == 2 {
            guard let value = Int(parts[1]), value >= -127, value <= 127 else {
                throw fail("'\(parts[1])' is not a dBm value (-127...127)")
            }
            dBm = value
        }
        if parts[0] == "-" {
            guard let dBm else { throw fail("'p:-' needs a default, e.g. 'p:-:-59'") }
            return .fixed(dBm)
        }
        let field = try range(String(parts[0]), suffixes: "l", fail)
        guard field.length <= 4 else { throw fail("a power field has at most 4 bytes") }
        return .field(field, correction: dBm ?? 0)
    }
}
