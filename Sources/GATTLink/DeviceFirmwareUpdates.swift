import BeaconModel
import BeaconRuntime
import DeviceProtocols
import SecureDFU
import Synchronization

/// Secure DFU updates started by the daemon (the MQTT `dfu` command and the Home Assistant update entity's
/// `install`, docs/gatt.md): each runs `SecureDFUSession` (the one DFU path, shared with `beaconbridge gatt dfu`)
/// on a thread of its own, never on the daemon's loop, over connections from the same `ConnectionSlots` as the
/// commands. One update per device at a time and at most `limit` at once: `start` refuses another with `busy`
/// at once, so nothing ever waits for an update.
public final class DeviceFirmwareUpdates: Sendable {
    public struct Request: Sendable {
        public var address: BluetoothAddress
        public var random: Bool
        public var package: DFUPackage
        public var force: Bool

        public init(address: BluetoothAddress, random: Bool, package: DFUPackage, force: Bool) {
            self.address = address
            self.random = random
            self.package = package
            self.force = force
        }
    }

    /// How an update ended.
    public struct Finished: Sendable, Equatable {
        public var outcome: SecureDFUSession.Outcome
        /// Seconds from the start to the end (connects and reconnects included).
        public var seconds: Double
    }

    public typealias Report = @Sendable (SecureDFUSession.Event) -> Void
    public typealias Completion = @Sendable (Result<Finished, GATTCommandError>) -> Void

    public let executor: GATTCommandExecutor
    public let limit: Int
    public let options: SecureDFUSession.Options
    private let running = Mutex<(devices: Set<BluetoothAddress>, stopped: Bool)>(([], false))

    public init(executor: GATTCommandExecutor, limit: Int, options: SecureDFUSession.Options = .init()) {
        self.executor = executor
        self.limit = max(1, limit)
        self.options = options
    }

    /// Whether an update of `address` runs now.
    public func isRunning(_ address: BluetoothAddress) -> Bool { running.withLock { $0.devices.contains(address) } }

    /// Starts an update; nil when it runs (then `report` and `completion` are called on its thread, `completion`
    /// exactly once), else why it was refused (`busy`, `stopping`, `system`).
    public func start(_ request: Request, report: @escaping Report, completion: @escaping Completion)
        -> GATTCommandError?
    {
        let refusal: GATTCommandError? = running.withLock { state in
            if state.stopped {
                return GATTCommandError(kind: "stopping", step: "queue", message: "the gateway is stopping")
            }
            if state.devices.contains(request.address) {
                return GATTCommandError(
                    kind: "busy", step: "dfu", message: "an update of \(request.address) is running already")
            }
            if state.devices.count >= limit {
                return GATTCommandError(
                    kind: "busy", step: "dfu", message: "\(limit) updates are running; try again later")
            }
            state.devices.insert(request.address)
            return nil
        }
        if let refusal { return refusal }
        let code = DedicatedThread.start(name: "bb-dfu") { [self] in
            let result = run(request, report: report)
            running.withLock { _ = $0.devices.remove(request.address) }
            completion(result)
        }
        guard code == 0 else {
            running.withLock { _ = $0.devices.remove(request.address) }
            return GATTCommandError(kind: "system", step: "thread", message: "cannot start a thread (errno \(code))")
        }
        return nil
    }

    /// Refuses new updates; running ones end by their own timeouts (the target keeps what it confirmed, so the
    /// next update resumes).
    public func stop() { running.withLock { $0.stopped = true } }

    private func run(_ request: Request, report: Report) -> Result<Finished, GATTCommandError> {
        var sessionOptions = options
        sessionOptions.force = request.force
        let session = SecureDFUSession(package: request.package, options: sessionOptions)
        let started = SystemClock.monotonic()
        do {
            let outcome = try session.run(
                connect: { () throws(GATTLinkError) -> GATTConnection in
                    try GATTConnection.open(
                        adapter: executor.adapter, peer: request.address, randomAddress: request.random,
                        timeout: executor.connectTimeout, slots: executor.slots, requestTimeout: executor.requestTimeout
                    )
                }, report: report)
            return .success(Finished(outcome: outcome, seconds: SystemClock.monotonic() - started))
        } catch {
            return .failure(error.commandError)
        }
    }
}

extension SecureDFUSession.Failure {
    /// The error a `dfu` reply carries: the link's kinds (`connect_timeout`, `no_slot`...) or the transfer's
    /// (`invalid_package`, `target_error`, `checksum_mismatch`, `malformed_response`, `timeout`, `disconnected`,
    /// `att_error`...), with the DFU step.
    public var commandError: GATTCommandError {
        switch self {
        case .link(let error):
            return error.commandError
        case .transfer(let error):
            let kind: String
            switch error {
            case .invalidPackage: kind = "invalid_package"
            case .target: kind = "target_error"
            case .checksumMismatch: kind = "checksum_mismatch"
            case .malformedResponse: kind = "malformed_response"
            case .timeout: kind = "timeout"
            case .disconnected: kind = "disconnected"
            case .link(_, let gattError):
                kind = gattError.commandKind
            }
            return GATTCommandError(kind: kind, step: error.step.rawValue, message: "dfu \(error)")
        }
    }
}
