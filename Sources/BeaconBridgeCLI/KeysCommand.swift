import BeaconConfig
import BeaconDelivery
import BeaconFormats
import BeaconModel
import HCIScanner
import SQLiteStore
import YAMLConfig

#if canImport(Glibc)
import Glibc
import BeaconRuntime
import BeaconConfigReading
#endif

/// `beaconbridge keys import-bluez` and `beaconbridge keys check`: enrolment of phones, watches and tags with
/// private addresses (docs/private-devices.md). Keys are written to files and never printed.
enum KeysCommand {
    static let help = """
        Usage: beaconbridge keys import-bluez [--bluetooth-dir DIR] [--keys-dir DIR] [--device MAC --name NAME]
               beaconbridge keys check [--config FILE]

        import-bluez  reads the identity resolving keys BlueZ stored after pairing (DIR/<adapter>/<device>/info,
                      section [IdentityResolvingKey]; DIR defaults to /var/lib/bluetooth), writes each to
                      KEYS-DIR/<name>.irk (mode 0600; default /etc/beaconbridge/keys) and prints the
                      devices.known entries to add. --device picks one device, --name names it. Keys are never
                      printed. An existing key file with another key is not overwritten.
        check         lists the configured devices: key loaded (fingerprint only), the byte order that matched
                      and when each was last seen (from the gateway's database, outbox.path).
        Exit codes: 0 done, 64 usage, 66 nothing to read, 73 a key file cannot be written, 78 configuration.
        """

    static func run(_ arguments: [String]) -> Int32 {
        run(arguments, environment: ProcessEnvironment.current(), now: SystemClock.realtime())
    }

    static func run(_ arguments: [String], environment: [String: String], now: Double) -> Int32 {
        guard let subcommand = arguments.first, !["--help", "-h", "help"].contains(subcommand) else {
            Output.stdout(help)
            return arguments.isEmpty ? ExitCode.usage : ExitCode.ok
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            Output.stdout(help)
            return ExitCode.ok
        }
        switch subcommand {
        case "import-bluez": return importBlueZ(rest)
        case "check": return check(rest, environment: environment, now: now)
        default:
            Output.stderr("beaconbridge keys: unknown subcommand '\(subcommand)'\n\n\(help)")
            return ExitCode.usage
        }
    }

    // MARK: import-bluez

    static func importBlueZ(_ arguments: [String]) -> Int32 {
        var options: [String: String] = [:]
        var index = 0
        let known = ["--bluetooth-dir", "--keys-dir", "--device", "--name"]
        while index < arguments.count {
            let argument = arguments[index]
            guard known.contains(argument) else {
                Output.stderr("beaconbridge keys import-bluez: unexpected argument '\(argument)'\n\n\(help)")
                return ExitCode.usage
            }
            guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else {
                Output.stderr("beaconbridge keys import-bluez: \(argument) needs a value")
                return ExitCode.usage
            }
            options[argument] = arguments[index + 1]
            index += 2
        }
        if options["--name"] != nil && options["--device"] == nil {
            Output.stderr("beaconbridge keys import-bluez: --name needs --device (which device to name)")
            return ExitCode.usage
        }
        if let name = options["--name"], !GatewaySettings.isValidIdentifier(name) {
            Output.stderr(
                "beaconbridge keys import-bluez: `\(name)` is not a valid device name (1-64 letters, digits, `_` or `-`)"
            )
            return ExitCode.usage
        }
        let wanted = options["--device"].map { BluetoothAddress(string: $0) }
        if let wanted, wanted == nil {
            Output.stderr("beaconbridge keys import-bluez: --device needs an address like AA:BB:CC:DD:EE:FF")
            return ExitCode.usage
        }
        let bluetooth = options["--bluetooth-dir"] ?? "/var/lib/bluetooth"
        let keysDirectory = options["--keys-dir"] ?? "/etc/beaconbridge/keys"

        guard let adapters = LocalFiles.entries(of: bluetooth) else {
            Output.stderr(
                "beaconbridge keys import-bluez: cannot read \(bluetooth): \(LocalFiles.lastError()) "
                    + "(BlueZ's directory is readable by root only)")
            return ExitCode.noInput
        }
        var found: [(adapter: String, address: String, info: BlueZDeviceInfo)] = []
        for adapter in adapters.sorted() where BluetoothAddress(string: adapter) != nil {
            for device in (LocalFiles.entries(of: bluetooth + "/" + adapter) ?? []).sorted() {
                guard let address = BluetoothAddress(string: device) else { continue }
                if let wanted, wanted != address { continue }
                guard let text = LocalFiles.read(bluetooth + "/" + adapter + "/" + device + "/info", maxBytes: 65_536)
                else { continue }
                let info = BlueZDeviceInfo(parsing: text)
                if info.irk != nil { found.append((adapter, address.description, info)) }
            }
        }
        guard !found.isEmpty else {
            Output.stderr(
                "beaconbridge keys import-bluez: no paired device with an identity resolving key under \(bluetooth)"
                    + (options["--device"].map { " for \($0)" } ?? "")
                    + " (pair it first: bluetoothctl, then `pair <address>` while the phone shows it)")
            return ExitCode.noInput
        }
        if !LocalFiles.makeDirectory(keysDirectory) {
            Output.stderr("beaconbridge keys import-bluez: cannot create \(keysDirectory): \(LocalFiles.lastError())")
            return ExitCode.cantCreate
        }
        var entries: [String] = []
        var usedNames: Set<String> = []
        for device in found {
            var name = options["--name"] ?? BlueZDeviceInfo.deviceName(from: device.info.name, address: device.address)
            if usedNames.contains(name) { name += "-" + device.address.lowercased().filter { $0.isHexDigit }.suffix(4) }
            usedNames.insert(name)
            let path = keysDirectory + "/" + name + ".irk"
            let text =
                device.info.irk!.map { byte in
                    let digits = Array("0123456789abcdef")
                    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
                }.joined() + "\n"
            switch LocalFiles.writeSecret(text, to: path) {
            case .written, .unchanged: break
            case .differs:
                Output.stderr(
                    "beaconbridge keys import-bluez: \(path) exists and holds another key; not overwritten "
                        + "(remove it, or pick another name with --device and --name)")
                return ExitCode.cantCreate
            case .failed(let why):
                Output.stderr("beaconbridge keys import-bluez: cannot write \(path): \(why)")
                return ExitCode.cantCreate
            }
            let fingerprint = IdentityResolvingKey(bytes: device.info.irk!)?.fingerprint ?? "?"
            entries.append(
                """
                    # \(device.info.name ?? "unnamed") (\(device.address), paired with adapter \(device.adapter); key \(fingerprint))
                    - name: \(name)
                      irk_file: \(path)
                """)
        }
        Output.stdout(
            "# Add to the configuration under devices.known (docs/private-devices.md), then reload:\n"
                + "devices:\n  known:\n" + entries.joined(separator: "\n"))
        return ExitCode.ok
    }

    // MARK: check

    static func check(_ arguments: [String], environment: [String: String], now: Double) -> Int32 {
        let location: ConfigLocation
        switch ConfigCommandLine.parse(arguments, command: "keys check", help: help, environment: environment) {
        case .parsed(let parsed): location = parsed.location
        case .exit(let code): return code
        }
        let configuration: GatewayConfiguration
        switch location.load(command: "keys check") {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        let seen = DeviceKeyReport.seenKeys(databasePath: configuration.outbox.path)
        Output.stdout(
            DeviceKeyReport.lines(configuration.devices, seen: seen.rows, now: now, detailed: true)
                .joined(separator: "\n"))
        if let problem = seen.problem { Output.stderr("beaconbridge keys check: \(problem)") }
        return ExitCode.ok
    }
}

/// Which configured devices were seen, with which byte order: `keys check` and `check-config`'s summary.
enum DeviceKeyReport {
    /// The `device_keys` rows of the database at `databasePath`; none (and no problem) when it does not exist.
    static func seenKeys(databasePath: String) -> (rows: [SeenDeviceKey], problem: String?) {
        guard access(databasePath, F_OK) == 0 else { return ([], nil) }
        do {
            let database = try GatewayDatabase(settings: OutboxSettings(path: databasePath))
            return (try database.loadSeenDeviceKeys(), nil)
        } catch {
            return ([], "cannot read \(databasePath): \(error)")
        }
    }

    static func lines(_ settings: PrivateDeviceSettings, seen: [SeenDeviceKey], now: Double, detailed: Bool) -> [String]
    {
        settings.known.map { device in
            var line = "  \(device.name) (\(device.beaconID)): "
            guard let key = device.key else {
                return line + "key not loaded (\(device.keySource.key) exists only while the service runs)"
            }
            if detailed { line += "key \(key.fingerprint) from \(device.keySource.key), " }
            guard let row = seen.first(where: { $0.name == device.name }), row.fingerprint == key.fingerprint else {
                return line + "not seen yet (byte order unknown)"
            }
            let age = max(0, now - row.lastSeen)
            return line + "key order \(row.order.name), last seen \(ConfigDuration.format(seconds: age.rounded())) ago"
        }
    }
}
