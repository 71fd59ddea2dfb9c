import BeaconRuntime
import DeviceProtocols
import SecureDFU

#if canImport(Glibc)
import Glibc
#endif

/// A Secure DFU update of one device over GATT: the core's `SecureDFUTransfer` driven over a `GATTConnection`
/// (control point `8ec90001-…` written with response and subscribed for notifications, packet `8ec90002-…`
/// written without response), with a bounded number of reconnects after a dropped link, each resuming from what
/// the target's Select responses report. Synchronous, on the caller's thread; every wait is bounded by the
/// transfer's response timeout.
public struct SecureDFUSession {
    public struct Options: Sendable {
        /// Packets between receipts (PRN); 0 checks each object only at its end.
        public var receiptInterval: UInt16 = 12
        /// How long to wait for each control point response or receipt.
        public var responseTimeout: Double = 10
        /// Reconnects after the link dropped mid-transfer (each resumes), then the transfer fails.
        public var reconnects = 3
        /// The wait before the first reconnect, doubled for each further one.
        public var backoff: Double = 1
        /// Send even when the device reports the package's version (or a newer one).
        public var force = false
        public init() {}
    }

    /// What the session reports as it goes.
    public enum Event: Sendable, Equatable {
        case connected(attempt: Int, mtu: Int)
        /// The device's Firmware Revision String read as a whole number (nil: absent or not a number).
        case installedVersion(UInt32?)
        case progress(DFUProgress)
        /// The link dropped (or a reconnect failed); reconnecting after `delay` seconds.
        case reconnecting(attempt: Int, delay: Double, reason: String)
    }

    public enum Outcome: Sendable, Equatable {
        case completed(DFUProgress)
        /// The device reports this package's version already (and `force` was not given).
        case upToDate(UInt32)
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Connecting or finding the DFU characteristics failed.
        case link(GATTLinkError)
        case transfer(DFUError)
        public var description: String {
            switch self {
            case .link(let error): return "\(error)"
            case .transfer(let error): return "dfu \(error)"
            }
        }
    }

    public let package: DFUPackage
    public let options: Options
    private let clock: @Sendable () -> Double
    private let sleep: (Double) -> Void

    public init(
        package: DFUPackage, options: Options = Options(),
        clock: @escaping @Sendable () -> Double = { SystemClock.monotonic() },
        sleep: @escaping (Double) -> Void = { seconds in _ = usleep(UInt32(min(seconds, 60) * 1_000_000)) }
    ) {
        self.package = package
        self.options = options
        self.clock = clock
        self.sleep = sleep
    }

    /// Connects with `connect` (again after a drop, at most `options.reconnects` times), checks the version once,
    /// and transfers until the target executed the last object.
    public func run(
        connect: () throws(GATTLinkError) -> GATTConnection, report: (Event) -> Void
    ) throws(Failure) -> Outcome {
        var installed: UInt32?
        var attempt = 0
        while true {
            let connection: GATTConnection
            do {
                connection = try connect()
            } catch {
                // A reconnect that fails is one of the bounded attempts; the first connect is not retried.
                guard attempt > 0, attempt < options.reconnects, isTransient(error) else { throw .link(error) }
                attempt += 1
                let delay = options.backoff * Double(1 << min(attempt - 1, 6))
                report(.reconnecting(attempt: attempt, delay: delay, reason: "\(error)"))
                sleep(delay)
                continue
            }
            defer { connection.close() }
            report(.connected(attempt: attempt, mtu: connection.client.mtu))
            if attempt == 0 {
                installed = try installedVersion(connection)
                report(.installedVersion(installed))
                if let installed, let version = package.firmwareVersion, version == installed, !options.force {
                    return .upToDate(installed)
                }
            }
            var configuration = SecureDFUTransfer.Configuration(
                packetSize: connection.client.mtu - 3, receiptInterval: options.receiptInterval,
                responseTimeout: options.responseTimeout, installedVersion: installed,
                allowDowngrade: options.force)
            configuration.objectRetries = 3
            var transfer = SecureDFUTransfer(package: package, configuration: configuration)
            switch try run(&transfer, over: connection, report: report) {
            case .completed(let progress):
                return .completed(progress)
            case .failed(let error):
                guard case .disconnected = error, attempt < options.reconnects else { throw .transfer(error) }
                attempt += 1
                let delay = options.backoff * Double(1 << min(attempt - 1, 6))
                report(.reconnecting(attempt: attempt, delay: delay, reason: "\(error)"))
                connection.close()
                sleep(delay)
            default:
                throw .transfer(.malformedResponse(transfer.step, reason: "the transfer stopped without an outcome"))
            }
        }
    }

    private func isTransient(_ error: GATTLinkError) -> Bool {
        switch error.kind {
        case .connectTimeout, .hostDown, .refused, .disconnected: return true
        default: return false
        }
    }

    /// The Firmware Revision String (0x2A26) as a whole number, when the device has one that is.
    private func installedVersion(_ connection: GATTConnection) throws(Failure) -> UInt32? {
        let text: [UInt8]
        do {
            text = try connection.read(.uuid16(0x2A26))
        } catch {
            if case .notFound = error.kind { return nil }
            if case .gatt(.notFound) = error.kind { return nil }
            throw .link(error)
        }
        return UInt32(String(decoding: text, as: UTF8.self).trimmingSpaces)
    }

    /// One connection's part of the transfer: until it completes, fails, or the link drops (`.failed(.disconnected)`).
    private func run(
        _ transfer: inout SecureDFUTransfer, over connection: GATTConnection, report: (Event) -> Void
    ) throws(Failure) -> SecureDFUAction {
        let controlPoint: GATTCharacteristic
        let packet: GATTCharacteristic
        do {
            controlPoint = try connection.subscribe(SecureDFUProtocol.controlPoint)
            packet = try connection.characteristic(SecureDFUProtocol.packet)
        } catch {
            if error.kind == .disconnected { return .failed(.disconnected(.validatePackage, confirmedBytes: 0)) }
            throw .link(error)
        }
        let inbox = NotificationInbox()
        connection.onNotification = { notification in
            if notification.handle == controlPoint.valueHandle { inbox.values.append(notification.value) }
        }
        defer { connection.onNotification = nil }
        var pending = transfer.handle(.start(at: clock()))
        // Bounded: every pass performs an action or waits at most 0.5 s, and the transfer fails at its deadline.
        while true {
            guard !pending.isEmpty else {
                if !inbox.values.isEmpty {
                    pending = transfer.handle(.controlPoint(inbox.values.removeFirst(), at: clock()))
                    continue
                }
                let until = min(transfer.nextDeadline ?? clock() + 0.5, clock() + 0.5)
                do {
                    try connection.waitForNotifications(until: until) { !inbox.values.isEmpty }
                } catch {
                    pending = transfer.handle(.disconnected)
                    continue
                }
                if inbox.values.isEmpty { pending = transfer.handle(.tick(at: clock())) }
                if pending.isEmpty, transfer.isFinished {
                    return .failed(.malformedResponse(transfer.step, reason: "finished without an outcome"))
                }
                continue
            }
            let action = pending.removeFirst()
            switch action {
            case .writeControlPoint(let bytes):
                if let error = write(connection, .write(handle: controlPoint.valueHandle, value: bytes)) {
                    pending = transfer.handle(error)
                }
            case .writePacket(let bytes):
                if let error = write(connection, .writeWithoutResponse(handle: packet.valueHandle, value: bytes)) {
                    pending = transfer.handle(error)
                }
            case .progress(let progress):
                report(.progress(progress))
            case .completed, .failed:
                return action
            }
        }
    }

    /// Performs one write; the transfer's event when it failed.
    private func write(_ connection: GATTConnection, _ procedure: GATTProcedure) -> SecureDFUEvent? {
        do {
            try connection.perform(procedure)
            return nil
        } catch {
            guard case .gatt(let gattError) = error.kind else { return .disconnected }
            if case .disconnected = gattError { return .disconnected }
            return .writeFailed(gattError)
        }
    }
}

/// The control point notifications not yet handed to the transfer (a class: the connection's callback appends).
private final class NotificationInbox {
    var values: [[UInt8]] = []
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " || $0 == "\0" }.reversed().drop { $0 == " " || $0 == "\0" }.reversed())
    }
}
