import BeaconFormats
import BeaconModel

/// `beaconbridge decode`: decodes advertising bytes given as hex, or every advertising report of a btsnoop
/// capture, and prints one JSON object per input (docs/decoding.md).
///
///     beaconbridge decode [--hci] [--layout [NAME=]LAYOUT]... HEX...
///     beaconbridge decode --btsnoop FILE [--layout [NAME=]LAYOUT]...
///
/// Exit 0 when everything decoded, 65 when some input was malformed (its JSON object names the offset) or a
/// layout does not parse, 64 for usage errors, 66 when the capture is missing, unreadable or not a regular file.
enum DecodeCommand {
    struct Options {
        var hci = false
        var btsnoop: String?
        var layouts: [FormatSettings.Layout] = []
        var inputs: [String] = []
    }

    static let usage = """
        usage: beaconbridge decode [--hci] [--layout [NAME=]LAYOUT]... HEX...
               beaconbridge decode --btsnoop FILE [--layout [NAME=]LAYOUT]...
        """

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        switch parse(arguments) {
        case let .success(parsed): options = parsed
        case let .failure(problem):
            Output.stderr("beaconbridge decode: \(problem.message)\n\(usage)")
            return ExitCode.usage
        }
        var layouts: [BeaconLayout] = []
        for (index, entry) in options.layouts.enumerated() {
            if let problem = FormatSettings.layoutNameProblem(entry.name) {
                Output.stdout(
                    JSONValue.object([
                        ("error", .string("invalid layout name: \(problem)")),
                        ("layout", .int(Int64(index))),
                    ]).serialized)
                return ExitCode.dataError
            }
            do {
                layouts.append(try BeaconLayout(name: entry.name, layout: entry.layout))
            } catch {
                Output.stdout(
                    JSONValue.object([
                        ("error", .string("invalid layout '\(entry.name)': \(error)")), ("layout", .int(Int64(index))),
                        ("term_number", .int(Int64(error.termNumber))), ("term", .string(error.term)),
                    ]).serialized)
                return ExitCode.dataError
            }
        }
        let decoder = BeaconDecoder(layouts: layouts)
        if let path = options.btsnoop {
            return DecodeCapture(decoder: decoder).run(path: path)
        }
        var failed = false
        for (index, input) in options.inputs.enumerated() {
            let result = options.hci ? decodeEvent(input, decoder: decoder) : decodePayload(input, decoder: decoder)
            if case let .object(members) = result.json {
                Output.stdout(JSONValue.object([("input", .int(Int64(index)))] + members).serialized)
            }
            failed = failed || !result.ok
        }
        return failed ? ExitCode.dataError : ExitCode.ok
    }

    struct UsageProblem: Error { var message: String }

    static func parse(_ arguments: [String]) -> Result<Options, UsageProblem> {
        var options = Options()
        var index = 0
        func value() -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--hci": options.hci = true
            case "--btsnoop":
                guard let path = value() else { return .failure(UsageProblem(message: "--btsnoop needs a file")) }
                options.btsnoop = path
            case "--layout":
                guard let text = value(), !text.isEmpty else {
                    return .failure(UsageProblem(message: "--layout needs NAME=LAYOUT or a bare LAYOUT"))
                }
                options.layouts.append(layoutArgument(text, number: options.layouts.count + 1))
            case "--help", "-h":
                return .failure(UsageProblem(message: "decode advertising bytes to JSON"))
            default:
                if argument.hasPrefix("--") { return .failure(UsageProblem(message: "unknown option \(argument)")) }
                options.inputs.append(argument)
            }
            index += 1
        }
        if options.btsnoop != nil, !options.inputs.isEmpty || options.hci {
            return .failure(UsageProblem(message: "--btsnoop takes no hex inputs and no --hci"))
        }
        if options.btsnoop == nil, options.inputs.isEmpty {
            return .failure(UsageProblem(message: "no input: give hex bytes or --btsnoop FILE"))
        }
        return .success(options)
    }

    /// `NAME=LAYOUT`, or a bare layout as users paste it from the Android Beacon Library (`m:2-3=0215,...`):
    /// the text before the first `=` is a name only if it holds no `:` or `,` (which every layout term has).
    /// Bare layouts are named `layout` (then `layout2`, `layout3`, ... by position).
    static func layoutArgument(_ text: String, number: Int) -> FormatSettings.Layout {
        if let equals = text.firstIndex(of: "=") {
            let name = text[..<equals]
            if !name.contains(":"), !name.contains(",") {
                return .init(name: String(name), layout: String(text[text.index(after: equals)...]))
            }
        }
        return .init(name: number == 1 ? "layout" : "layout\(number)", layout: text)
    }

    /// One input's JSON and whether it decoded cleanly.
    struct InputResult {
        var json: JSONValue
        var ok: Bool
    }

    static func decodePayload(_ input: String, decoder: BeaconDecoder) -> InputResult {
        let bytes: [UInt8]
        switch DecodeHex.bytes(input) {
        case let .success(parsed): bytes = parsed
        case let .failure(error): return InputResult(json: error.json, ok: false)
        }
        let report = AdvertisingReport(
            timestamp: 0, eventType: 0, isExtended: false,
            address: BluetoothAddress(rawValue: 0), addressType: .unknown,
            rssi: nil, txPower: nil, data: bytes)
        let decoded = decoder.decode(report)
        guard case var .object(members) = decoded.json(includeReport: false) else {
            return InputResult(json: .null, ok: false)
        }
        if let overrun = decoded.advertisingData.overrunOffset {
            members.append(("error", .string("AD structure length runs past the end of the data")))
            members.append(("offset", .int(Int64(overrun))))
            return InputResult(json: .object(members), ok: false)
        }
        return InputResult(json: .object(members), ok: true)
    }

    static func decodeEvent(_ input: String, decoder: BeaconDecoder) -> InputResult {
        let bytes: [UInt8]
        switch DecodeHex.bytes(input) {
        case let .success(parsed): bytes = parsed
        case let .failure(error): return InputResult(json: error.json, ok: false)
        }
        do {
            let reports = try HCIEventParser.parse(bytes)
            return InputResult(
                json: .object([("reports", .array(reports.map { decoder.decode($0).json() }))]), ok: true)
        } catch {
            return InputResult(
                json: .object([("error", .string(error.reason)), ("offset", .int(Int64(error.offset)))]),
                ok: false)
        }
    }
}
