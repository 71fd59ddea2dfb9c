import BeaconConfigReading
import BeaconFormats
import BeaconModel
import BeaconRuntime
import DeviceProtocols
import GATTLink

/// `beaconbridge gatt`: connects to one device over LE (the kernel's L2CAP ATT channel, no bluetoothd) and
/// lists its services, reads, writes or subscribes to characteristics by UUID. One line per result on stdout;
/// errors on stderr name the device and the step.
enum GATTCommand {
    static let usage = """
        Usage: beaconbridge gatt --address AA:BB:CC:DD:EE:FF [--random] [--adapter hci0|N|ADDRESS]
                                 [--connect-timeout S] [--timeout S] ACTION
        Actions:
          services                         every primary service and characteristic (UUID, handles, properties)
          read UUID...                     read characteristics, e.g. `read 2a26 2a19` (firmware revision,
                                           battery level); prints `<uuid> <hex> "<text>"` (the text when the
                                           value is 2 or more printable ASCII characters)
          write UUID HEX [--no-response]   write a value (hex) with a Write Request (or a Write Command)
          subscribe UUID [--count N] [--seconds S] [--indicate]
                                           turn notifications on and print `notification <uuid> <hex>` for each,
                                           until N arrived or S seconds passed (default 10 s)
          write-and-wait UUID HEX [--count N] [--seconds S]
                                           subscribe to UUID, write HEX to it, then wait for its notifications
          dfu --package FILE.zip [--force] [--json] [--prn N] [--reconnects N]
                                           Nordic Secure DFU of an nRF Util package: validated before any
                                           connection; skipped when the device's firmware revision (2a26) is the
                                           package's version (--force sends anyway, also an older one); progress
                                           lines (JSON lines with --json); after a dropped link, reconnects (3
                                           times by default, 1, 2, 4 s apart) and resumes
        --random: the device's address is random (static or private), not public. --connect-timeout: the LE
        connect (default 20 s). --timeout: each ATT request (default 30 s, the spec's maximum).
        Exit codes: 0 done; 64 usage; 65 the device answered with something malformed, or (dfu) the package is
        refused (nothing is connected then); 66 (dfu) the package file cannot be read; 69 the adapter or the
        device cannot be used (connect refused, link lost, an ATT error, no such characteristic); 75 a timeout
        (connect or ATT request; try again).
        """

    enum Action: Equatable {
        case services
        case read([GATTUUID])
        case write(GATTUUID, [UInt8], withResponse: Bool)
        case subscribe(GATTUUID, indications: Bool)
        case writeAndWait(GATTUUID, [UInt8])
        case dfu(path: String)
    }

    struct Options {
        var adapter = AdapterSelector.index(0)
        var address: BluetoothAddress?
        var random = false
        var connectTimeout = GATTConnection.defaultConnectTimeout
        var requestTimeout = GATTClient.defaultRequestTimeout
        var count: Int?
        var seconds: Double = 10
        var action: Action?
        var force = false
        var json = false
        var receiptInterval: UInt16 = 12
        var reconnects = 3
    }

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") {
            Output.stdout(usage)
            return ExitCode.ok
        }
        let options: Options
        switch parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let message):
            Output.stderr("beaconbridge gatt: \(message)\n\n\(usage)")
            return ExitCode.usage
        }
        if case .dfu(let path) = options.action { return runDFU(options, path: path) }
        do {
            try execute(options)
            return ExitCode.ok
        } catch {
            Output.stderr("beaconbridge gatt: \(error)")
            return exitCode(for: error)
        }
    }

    /// 75 for timeouts, 65 for a malformed answer, 69 for everything else the device or adapter did.
    static func exitCode(for error: GATTLinkError) -> Int32 {
        switch error.kind {
        case .connectTimeout: return ExitCode.tempFail
        case .gatt(.timeout): return ExitCode.tempFail
        case .gatt(.malformedResponse): return ExitCode.dataError
        case .gatt(.valueTooLong): return ExitCode.usage
        default: return ExitCode.unavailable
        }
    }

    struct ParseFailure: Error { var message: String }

    static func parse(_ arguments: [String]) -> Result<Options, ParseFailure> {
        var options = Options()
        var positional: [String] = []
        var noResponse = false
        var indicate = false
        var packagePath: String?
        var index = 0
        func value(_ flag: String) -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        func fail(_ message: String) -> Result<Options, ParseFailure> { .failure(ParseFailure(message: message)) }
        while index < arguments.count {
            let flag = arguments[index]
            switch flag {
            case "--adapter", "-i":
                guard let text = value(flag), let selector = AdapterSelector(configValue: text) else {
                    return fail("--adapter takes hci0, an index or an adapter address")
                }
                options.adapter = selector
            case "--address":
                guard let text = value(flag), let address = BluetoothAddress(string: text) else {
                    return fail("--address takes a device address AA:BB:CC:DD:EE:FF")
                }
                options.address = address
            case "--random": options.random = true
            case "--public": options.random = false
            case "--no-response": noResponse = true
            case "--indicate": indicate = true
            case "--force": options.force = true
            case "--json": options.json = true
            case "--package":
                guard let text = value(flag), !text.isEmpty else { return fail("--package takes a .zip file") }
                packagePath = text
            case "--prn", "--reconnects":
                guard let text = value(flag), let number = UInt16(text), number <= 100 else {
                    return fail("\(flag) takes a whole number from 0 to 100")
                }
                if flag == "--prn" { options.receiptInterval = number } else { options.reconnects = Int(number) }
            case "--connect-timeout", "--timeout", "--seconds":
                guard let text = value(flag), let number = Double(text), number > 0, number <= 3600 else {
                    return fail("\(flag) takes seconds, more than 0 and at most 3600")
                }
                switch flag {
                case "--connect-timeout": options.connectTimeout = number
                case "--timeout":
                    guard number <= GATTClient.defaultRequestTimeout else {
                        return fail("--timeout is at most 30 s (the ATT transaction timeout)")
                    }
                    options.requestTimeout = number
                default: options.seconds = number
                }
            case "--count":
                guard let text = value(flag), let number = Int(text), number > 0, number <= 1_000_000 else {
                    return fail("--count takes a whole number from 1 to 1000000")
                }
                options.count = number
            default:
                guard !flag.hasPrefix("-") else { return fail("unknown option '\(flag)'") }
                positional.append(flag)
            }
            index += 1
        }
        guard options.address != nil else { return fail("--address is required") }
        guard let verb = positional.first else {
            return fail("an action is required (services, read, write, subscribe, write-and-wait, dfu)")
        }
        let operands = Array(positional.dropFirst())
        var uuids: [GATTUUID] = []
        for operand in operands.prefix(verb == "read" ? operands.count : verb == "dfu" ? 0 : 1) {
            guard let uuid = GATTUUID(operand) else {
                return fail("'\(operand)' is not a UUID (2a19, 0x2A19 or a dashed 128-bit UUID)")
            }
            uuids.append(uuid)
        }
        func hexValue() -> [UInt8]? {
            guard operands.count == 2 else { return nil }
            return Self.bytes(hex: operands[1])
        }
        switch verb {
        case "services":
            guard operands.isEmpty else { return fail("services takes no operand") }
            options.action = .services
        case "read":
            guard !uuids.isEmpty else { return fail("read needs at least one UUID") }
            options.action = .read(uuids)
        case "write", "write-and-wait":
            guard let uuid = uuids.first, let bytes = hexValue() else {
                return fail("\(verb) needs a UUID and a hex value (e.g. `\(verb) 2a06 01`)")
            }
            options.action =
                verb == "write" ? .write(uuid, bytes, withResponse: !noResponse) : .writeAndWait(uuid, bytes)
        case "subscribe":
            guard let uuid = uuids.first, operands.count == 1 else { return fail("subscribe needs one UUID") }
            options.action = .subscribe(uuid, indications: indicate)
        case "dfu":
            guard operands.isEmpty, let packagePath else { return fail("dfu needs --package FILE.zip") }
            options.action = .dfu(path: packagePath)
        default:
            return fail("unknown action '\(verb)'")
        }
        return .success(options)
    }

    /// Hexadecimal bytes as the configuration writes them (`HexBytes.parse`: "0a0B", "0x0a0b", "0a:0b" or
    /// "0a-0b"), or "" for an empty value; nil for anything else or more than 512 bytes (ATT's longest value).
    static func bytes(hex text: String) -> [UInt8]? {
        if text.isEmpty { return [] }
        guard let bytes = HexBytes.parse(text), bytes.count <= 512 else { return nil }
        return bytes
    }

    static func execute(_ options: Options) throws(GATTLinkError) {
        guard let address = options.address, let action = options.action else { return }
        let connection = try GATTConnection.open(
            adapter: options.adapter, peer: address, randomAddress: options.random, timeout: options.connectTimeout,
            slots: ConnectionSlots(limit: 1), requestTimeout: options.requestTimeout
        ) { notice in Output.stderr("beaconbridge gatt: \(notice)") }
        defer { connection.close() }
        Output.stderr("beaconbridge gatt: connected to \(address) (ATT_MTU \(connection.client.mtu))")
        switch action {
        case .services:
            for (service, characteristics) in try connection.discoverAll() {
                Output.stdout("service \(service.uuid) handles \(service.handle)-\(service.endHandle)")
                for characteristic in characteristics {
                    Output.stdout(
                        "  characteristic \(characteristic.uuid) handle \(characteristic.valueHandle) "
                            + "properties \(propertyNames(characteristic.properties))")
                }
            }
        case .read(let uuids):
            for uuid in uuids { Output.stdout(valueLine("\(uuid)", try connection.read(uuid))) }
        case .write(let uuid, let value, let withResponse):
            try connection.write(uuid, value: value, withResponse: withResponse)
            Output.stdout("written \(uuid) \(HexText.hex(value))")
        case .subscribe(let uuid, let indications):
            try listen(connection, uuid: uuid, indications: indications, options: options) {}
        case .dfu:
            break
        case .writeAndWait(let uuid, let value):
            try listen(connection, uuid: uuid, indications: false, options: options) { () throws(GATTLinkError) in
                try connection.write(uuid, value: value)
                Output.stdout("written \(uuid) \(HexText.hex(value))")
            }
        }
    }

    /// Subscribes, runs `then`, prints notifications of `uuid` until `--count` arrived or `--seconds` passed.
    private static func listen(
        _ connection: GATTConnection, uuid: GATTUUID, indications: Bool, options: Options,
        then: () throws(GATTLinkError) -> Void
    ) throws(GATTLinkError) {
        var received = 0
        var valueHandle: UInt16?
        connection.onNotification = { notification in
            guard notification.handle == valueHandle else { return }
            received += 1
            Output.stdout(
                valueLine((notification.isIndication ? "indication " : "notification ") + "\(uuid)", notification.value)
            )
        }
        valueHandle = try connection.subscribe(uuid, indications: indications).valueHandle
        Output.stdout("subscribed \(uuid)")
        try then()
        let deadline = SystemClock.monotonic() + options.seconds
        try connection.waitForNotifications(until: deadline) { options.count.map { received >= $0 } ?? false }
        Output.stderr("beaconbridge gatt: \(received) notification(s) of \(uuid)")
    }

    /// `<label> <hex>` and, when the value is two or more printable ASCII characters, the text in quotes (a
    /// one-byte value is more often a number, e.g. a battery level of 87 that would show as "W").
    static func valueLine(_ label: String, _ value: [UInt8]) -> String {
        let printable = value.count >= 2 && value.allSatisfy { (0x20...0x7E).contains($0) && $0 != 0x22 }
        let text = printable ? " \"\(String(decoding: value, as: UTF8.self))\"" : ""
        return "\(label) \(HexText.hex(value))\(text)"
    }

    static func propertyNames(_ properties: GATTCharacteristicProperties) -> String {
        let present = properties.names
        return present.isEmpty ? "none" : present.joined(separator: ",")
    }
}
