import BeaconFormats
import BeaconModel
import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// One open, configured adapter: the socket, which scan commands it takes, and the scan on/off steps.
///
/// Not Sendable: owned by the scanner's reading thread.
final class ScanSession {
    let adapter: HCIAdapter
    let socket: HCISocket
    let extended: Bool
    let parameters: ScanParameters
    /// A fed socket (`HCISocket(adopting:)`): no adapter, no commands; restart and close only close.
    let isFeed: Bool
    /// The identity beacon this session advertises (re-applied after a scan restart, stopped at close).
    private(set) var advertising: AdvertisingParameters?

    /// Events the socket lets through while reading: LE Meta (advertising reports) and Hardware Error
    /// (so supervision sees a controller reset at once).
    /// Command Complete too: one for a scan enable this scanner did not send means the kernel (an LE connect) or
    /// another program changed the scan (`ScanSupervisor.scanTakenOver`).
    static let readingEvents: [Int32] = [EVT_LE_META_EVENT, EVT_HARDWARE_ERROR, EVT_CMD_COMPLETE]
    /// While sending commands, their replies must pass too.
    static let commandEvents: [Int32] = [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META_EVENT, EVT_HARDWARE_ERROR]

    /// Opens the adapter, brings it up if it is down (needs CAP_NET_ADMIN), picks legacy or extended scanning,
    /// sets the parameters and enables scanning (disable first, duplicates filter off).
    init(
        selector: AdapterSelector, parameters: ScanParameters, mode: ScannerSettings.ExtendedScanning,
        tap: ((_ packet: [UInt8], _ received: Bool, _ time: Timestamp) -> Void)?, onBroughtUp: (HCIAdapter) -> Void
    ) throws(HCIError) {
        var adapter = try HCIAdapter.resolve(selector)
        if !adapter.isUp {
            try HCIAdapter.up(deviceID: adapter.deviceID, label: adapter.name)
            adapter = try HCIAdapter.info(deviceID: adapter.deviceID, label: adapter.name)
            onBroughtUp(adapter)
        }
        let socket = try HCISocket(deviceID: adapter.deviceID, label: adapter.name)
        socket.tap = tap
        try socket.saveFilter()
        try socket.setEventFilter(Self.commandEvents)

        var useExtended: Bool
        switch mode {
        case .off:
            useExtended = false
        case .auto, .on:
            let commands = try? socket.send(.readLocalSupportedCommands)
            let features = try? socket.send(.leReadLocalSupportedFeatures)
            let capabilities = ControllerCapabilities(supportedCommandsReply: commands, leFeaturesReply: features)
            if mode == .on && !capabilities.supportsExtendedScanning {
                socket.restoreFilter()
                throw HCIError(kind: .unsupported, adapter: adapter.name, call: "LE extended scanning (extended: on)")
            }
            useExtended = capabilities.supportsExtendedScanning
        }
        do {
            do {
                try Self.configure(socket, extended: useExtended, parameters: parameters)
            } catch  where mode == .auto && useExtended && error.isCommandFailure {
                // The controller advertised extended scanning but rejects it: legacy is the safe choice.
                useExtended = false
                try Self.configure(socket, extended: false, parameters: parameters)
            }
            try socket.setEventFilter(Self.readingEvents)
        } catch {
            socket.restoreFilter()
            socket.close()
            throw error
        }
        self.adapter = adapter
        self.socket = socket
        self.extended = useExtended
        self.parameters = parameters
        self.isFeed = false
    }

    /// A session on a fed socket (benches, tests): events are read from it as from an adapter's socket.
    init(feed socket: HCISocket, parameters: ScanParameters) {
        self.adapter = HCIAdapter(deviceID: -1, name: socket.label, address: BluetoothAddress(rawValue: 0), isUp: true)
        self.socket = socket
        self.extended = false
        self.parameters = parameters
        self.isFeed = true
    }

    /// Sets the scan parameters and enables scanning; scanning is disabled first (a controller rejects
    /// "enable" while enabled with Command Disallowed).
    private static func configure(_ socket: HCISocket, extended: Bool, parameters: ScanParameters) throws(HCIError) {
        _ = try? socket.send(extended ? .leSetExtendedScanEnable(false) : .leSetScanEnable(false))
        if extended {
            try socket.send(.leSetExtendedScanParameters(parameters))
            try socket.send(.leSetExtendedScanEnable(true, filterDuplicates: false))
        } else {
            try socket.send(.leSetScanParameters(parameters))
            try socket.send(.leSetScanEnable(true, filterDuplicates: false))
        }
    }

    /// Disables and re-enables scanning (the first supervision step); the identity beacon, if any, is started
    /// again too (a controller that lost the scan may have lost it as well).
    func restartScan() throws(HCIError) -> IdentityAdvertiser.Outcome? {
        guard !isFeed else { return nil }
        try socket.setEventFilter(Self.commandEvents)
        defer { try? socket.setEventFilter(Self.readingEvents) }
        disableQuietly()
        if extended {
            try socket.send(.leSetExtendedScanEnable(true, filterDuplicates: false))
        } else {
            try socket.send(.leSetScanEnable(true, filterDuplicates: false))
        }
        return advertising.map { IdentityAdvertiser.start($0, extended: extended, on: socket) }
    }

    /// Starts advertising `parameters` beside the scan, with the command family the scan uses; best effort.
    func startAdvertising(_ parameters: AdvertisingParameters) -> IdentityAdvertiser.Outcome {
        guard !isFeed else {
            return .failed(HCIError(kind: .unsupported, adapter: adapter.name, call: "advertising on a fed socket"))
        }
        advertising = parameters
        try? socket.setEventFilter(Self.commandEvents)
        defer { try? socket.setEventFilter(Self.readingEvents) }
        return IdentityAdvertiser.start(parameters, extended: extended, on: socket)
    }

    /// Disables scanning; a controller that was not scanning answers Command Disallowed, which is fine.
    func disableQuietly() {
        _ = try? socket.send(extended ? .leSetExtendedScanEnable(false) : .leSetScanEnable(false))
    }

    /// Stops scanning, puts the socket's filter back and closes it. Best effort: the adapter may be gone.
    func close() {
        if socket.fd >= 0, !isFeed {
            try? socket.setEventFilter(Self.commandEvents)
            disableQuietly()
            if advertising != nil { IdentityAdvertiser.stop(extended: extended, on: socket) }
            socket.restoreFilter()
        }
        socket.close()
    }
}
