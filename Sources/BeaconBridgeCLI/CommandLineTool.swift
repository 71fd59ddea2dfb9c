import HCIScanner

/// The `beaconbridge` command line: dispatch to one command per file. Exit codes follow sysexits(3).
public enum CommandLineTool {
    public static let version = "0.1.0"

    public static let usage = """
        beaconbridge \(version): Bluetooth LE beacons to MQTT

        Usage:
          beaconbridge run [--config FILE]          scan and publish (the daemon)
          beaconbridge check-config [--config FILE] validate a configuration file
          beaconbridge decode [--hci] [--layout L] HEX...   decode advertising bytes to JSON
          beaconbridge decode --btsnoop FILE        decode every advertising report of a capture
          beaconbridge replay FILE [--config FILE] [--speed X] [--max-gap S] [--state-db DB]
                                                    run a btsnoop capture through the pipeline (pauses of a
                                                    paced replay capped at --max-gap, default 5 s)
                                                    (--state-db: save/restore region state in DB, also for run)
                                                    (--teach REGION:DEVICE:AT:START-END: teach over a
                                                    window of the capture, seconds from its first event)
          beaconbridge simulate --scenario FILE     run a scripted scenario, print events and accuracy
          beaconbridge scan [--adapter hci0] [--seconds N]  print raw advertising reports (diagnostics)
          beaconbridge keys import-bluez | check    enrol phones' identity resolving keys, see which were seen
          beaconbridge outbox [--config FILE] [--requeue]   the backlog and the events the broker refused
          beaconbridge esphome-mdns [--config FILE] the Avahi service file announcing the ESPHome proxy
          beaconbridge rooms status [--config FILE] [--wait S]  the site's gateways and self-calibration
          beaconbridge regions teach --region R --device ID --at boundary|inside|1m [--seconds S]
                                                    teach a region's levels (or a device's 1 m level)
          beaconbridge regions forget | status      remove what was taught, show it
          beaconbridge devices status [--config FILE] [--wait S]
          beaconbridge site push FILE [--config FILE] [--version N]  sign and publish the site's shared configuration
          beaconbridge site status [--config FILE] [--wait S]  every gateway's site configuration version and state
                                                    every beacon's presence and learned interval and away time
          beaconbridge gatt --address ADDR [--random] [--adapter hci0] services | read UUID... |
                            write UUID HEX | subscribe UUID [--count N] [--seconds S]
                                                    connect to a device and use its GATT characteristics
          beaconbridge --version | --help

        Exit codes (every command; sysexits(3)):
          0   success
          64  usage: unknown command or option, a missing or malformed argument
          65  bad data: hex or a --layout that does not decode, a file that is not a btsnoop capture, a
              capture damaged in the middle (after replaying or decoding what preceded the damage); gatt: a
              malformed answer from the device
          66  no input: the configuration, capture, scenario or database file is missing or unreadable, or
              is a directory, FIFO or pipe
          69  unavailable: the Bluetooth adapter cannot be used, or the live source ended; rooms status and
              devices status: the broker cannot be reached; gatt: the device
              refused, the link went down, an ATT error, no such characteristic
          70  internal error
          73  cannot create an output file (a capture to record or write, a key file)
          74  I/O error: the database cannot be opened (disk full at start) or a read or write failed
          75  temporary failure: a replay could not deliver everything (the rest stays in the outbox); gatt:
              the connect or an ATT request timed out
          78  configuration: every problem printed as FILE:LINE:COL: KEYPATH: MESSAGE (also an invalid scenario)
        """

    /// Runs the command and returns its exit code once its output is written (`Output.flush()`).
    public static func main(_ arguments: [String]) -> Int32 {
        let code = dispatch(arguments)
        Output.flush()
        return code
    }

    static func dispatch(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            Output.stderr(usage)
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            Output.stdout(usage)
            return ExitCode.ok
        case "--version", "-V":
            Output.stdout("beaconbridge \(version)")
            return ExitCode.ok
        case "decode": return DecodeCommand.run(rest)
        case "simulate": return SimulateCommand.run(rest)
        case "check-config": return CheckConfigCommand.run(rest)
        case "run": return RunCommand.run(rest)
        case "replay": return ReplayCommand.run(rest)
        case "scan": return ScanCommand.run(rest)
        case "keys": return KeysCommand.run(rest)
        case "outbox": return OutboxCommand.run(rest)
        case "esphome-mdns": return ESPHomeMDNSCommand.run(rest)
        case "gatt": return GATTCommand.run(rest)
        case "rooms": return RoomsCommand.run(rest)
        case "devices": return DevicesCommand.run(rest)
        case "regions": return RegionsCommand.run(rest)
        case "site": return SiteCommand.run(rest)
        default:
            Output.stderr("beaconbridge: unknown command '\(command)'\n\n\(usage)")
            return ExitCode.usage
        }
    }
}

/// sysexits(3) codes: the table in `CommandLineTool.usage` and the README lists where each is used.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
    public static let noInput: Int32 = 66
    public static let unavailable: Int32 = 69
    public static let software: Int32 = 70
    public static let cantCreate: Int32 = 73
    public static let ioError: Int32 = 74
    /// A replay could not deliver everything (broker unreachable): the rest stays in the outbox; try again.
    public static let tempFail: Int32 = 75
    public static let config: Int32 = 78
}

extension ExitCode {
    /// The code for a source that could not start or ended with an error: a capture that is missing or not a
    /// regular file 66, not btsnoop or damaged 65, a read error 74; an adapter 69.
    static func forSourceFailure(_ error: any Error) -> Int32 {
        if let failure = error as? ReplaySource.Failure {
            switch failure.kind {
            case .unreadable: return noInput
            case .notBTSnoop, .damaged: return dataError
            case .readError: return ioError
            }
        }
        return unavailable
    }
}
