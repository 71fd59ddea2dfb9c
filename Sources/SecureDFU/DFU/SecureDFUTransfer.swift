import BeaconModel
import DeviceProtocols

/// One Secure DFU transfer to one target, as a state machine: events in (start, control point notifications,
/// the timer, a failed write, the link going down), actions out (control point and packet writes, progress, the
/// end). The caller connects, finds the DFU service, subscribes to the control point's notifications (with
/// `GATTClient`), then feeds this machine; it performs every write and owns the timer (`nextDeadline`).
///
/// The flow (nRF5 SDK DFU protocol): receipts off; Select the command object; Create it, write the init packet,
/// check its CRC, Execute; receipts every `receiptInterval` packets; Select the data object; for each object of
/// at most the target's maximum size: Create, write packets (each receipt's offset and CRC checked), Calculate
/// Checksum, Execute. Progress follows every confirmation.
///
/// Resume: a new transfer against a target that already holds part of the image continues from what the
/// target's Select responses report, when their CRC matches the package (a matching init packet is executed
/// again rather than resent; a partial data object is completed; a complete one executed); otherwise the
/// unconfirmed object is created again. A bad object is sent again up to `objectRetries` times.
public struct SecureDFUTransfer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Bytes per packet write: the ATT_MTU minus 3.
        public var packetSize: Int
        /// Packets between receipts (PRN); 0 turns receipts off (each object is checked only at its end).
        public var receiptInterval: UInt16
        /// How long to wait for each control point response or receipt.
        public var responseTimeout: Timestamp
        /// How many times one object is sent again after a CRC or offset mismatch.
        public var objectRetries: Int
        /// The target's firmware version when known: a package that is not newer is refused.
        public var installedVersion: UInt32?
        public var allowDowngrade: Bool

        public init(
            packetSize: Int = 20, receiptInterval: UInt16 = 12, responseTimeout: Timestamp = 10,
            objectRetries: Int = 3, installedVersion: UInt32? = nil, allowDowngrade: Bool = false
        ) {
            self.packetSize = max(1, packetSize)
            self.receiptInterval = receiptInterval
            self.responseTimeout = responseTimeout
            self.objectRetries = objectRetries
            self.installedVersion = installedVersion
            self.allowDowngrade = allowDowngrade
        }
    }

    package enum Phase: Sendable, Hashable {
        case idle, receiptsOffForInit, selectCommand, createCommand, checksumCommand, executeCommand
        case receiptsForData, selectData, createData, awaitingReceipt, checksumData, executeData
        case finished, failed
    }

    public let package: DFUPackage
    public let configuration: Configuration
    package var phase = Phase.idle
    /// When the awaited response is late.
    public internal(set) var nextDeadline: Timestamp?

    var dataMaximumSize = 0
    var objectStart = 0
    var objectEnd = 0
    /// Image bytes written to the target so far.
    package var sent = 0
    /// Image bytes the target has confirmed.
    public internal(set) var confirmed = 0
    var packetsSinceReceipt = 0
    var retries = 0
    package var startTime: Timestamp = 0
    var startOffset = 0
    /// CRC-32 of `firmware[0..<crcCache.offset]`, so prefixes are computed incrementally.
    var crcCache: (offset: Int, crc: UInt32) = (0, 0)

    public init(package: DFUPackage, configuration: Configuration = Configuration()) {
        self.package = package
        self.configuration = configuration
    }

    /// Whether the transfer ended (success or failure).
    public var isFinished: Bool { phase == .finished || phase == .failed }

    public mutating func handle(_ event: SecureDFUEvent) -> [SecureDFUAction] {
        switch event {
        case .start(let now):
            guard phase == .idle else { return [] }
            return start(now: now)
        case .controlPoint(let bytes, let now):
            guard !isFinished, phase != .idle else { return [] }
            return receive(bytes, now: now)
        case .tick(let now):
            guard !isFinished, let deadline = nextDeadline, now >= deadline else { return [] }
            return fail(.timeout(step))
        case .writeFailed(let error):
            guard !isFinished, phase != .idle else { return [] }
            return fail(.link(step, error))
        case .disconnected:
            guard !isFinished, phase != .idle else { return [] }
            return fail(.disconnected(step, confirmedBytes: confirmed))
        }
    }

    private mutating func start(now: Timestamp) -> [SecureDFUAction] {
        startTime = now
        let problems = package.problems(
            installedVersion: configuration.installedVersion, allowDowngrade: configuration.allowDowngrade)
        guard problems.isEmpty else { return fail(.invalidPackage(.validatePackage, problems)) }
        return request(SecureDFUProtocol.setReceiptNotificationRequest(0), .receiptsOffForInit, now: now)
    }

    /// The step the machine is in, for errors.
    public var step: DFUStep {
        switch phase {
        case .idle, .finished, .failed: return .validatePackage
        case .receiptsOffForInit, .receiptsForData: return .setReceiptNotification
        case .selectCommand: return .selectCommand
        case .createCommand: return .createCommand
        case .checksumCommand: return .sendInitPacket
        case .executeCommand: return .executeCommand
        case .selectData: return .selectData
        case .createData: return .createData
        case .awaitingReceipt: return .sendFirmware
        case .checksumData: return .verifyChecksum
        case .executeData: return .executeData
        }
    }

    /// The request opcode whose response the phase awaits.
    var awaitedOpcode: UInt8 {
        switch phase {
        case .receiptsOffForInit, .receiptsForData: return SecureDFUProtocol.setReceiptNotification
        case .selectCommand, .selectData: return SecureDFUProtocol.select
        case .createCommand, .createData: return SecureDFUProtocol.create
        case .checksumCommand, .checksumData, .awaitingReceipt: return SecureDFUProtocol.calculateChecksum
        case .executeCommand, .executeData: return SecureDFUProtocol.execute
        case .idle, .finished, .failed: return 0
        }
    }

    package mutating func request(_ bytes: [UInt8], _ next: Phase, now: Timestamp) -> [SecureDFUAction] {
        phase = next
        nextDeadline = now + configuration.responseTimeout
        return [.writeControlPoint(bytes)]
    }

    package mutating func fail(_ error: DFUError) -> [SecureDFUAction] {
        phase = .failed
        nextDeadline = nil
        return [.failed(error)]
    }

    /// CRC-32 of the first `count` image bytes.
    mutating func imageCRC(upTo count: Int) -> UInt32 {
        let end = min(max(0, count), package.firmware.count)
        if crcCache.offset > end { crcCache = (0, 0) }
        let crc = CRC32.checksum(package.firmware, crcCache.offset..<end, continuing: crcCache.crc)
        crcCache = (end, crc)
        return crc
    }

    package func progress(now: Timestamp) -> DFUProgress {
        let total = package.firmware.count
        let elapsed = now - startTime
        return DFUProgress(
            bytes: confirmed, totalBytes: total, percent: total == 0 ? 100 : confirmed * 100 / total,
            bytesPerSecond: elapsed > 0 ? Double(confirmed - startOffset) / elapsed : nil)
    }
}

/// An input to `SecureDFUTransfer`; time is the caller's clock in seconds.
public enum SecureDFUEvent: Sendable, Hashable {
    /// The control point's notifications are on: begin (the package is validated first).
    case start(at: Timestamp)
    /// A control point notification.
    case controlPoint([UInt8], at: Timestamp)
    case tick(at: Timestamp)
    /// A control point or packet write failed at the GATT level.
    case writeFailed(GATTError)
    case disconnected
}

/// What the caller does for the transfer.
public enum SecureDFUAction: Sendable, Hashable {
    /// Write (with response) to the control point.
    case writeControlPoint([UInt8])
    /// Write without response to the packet characteristic.
    case writePacket([UInt8])
    case progress(DFUProgress)
    /// Every object executed: the target now validates and activates the image.
    case completed(DFUProgress)
    case failed(DFUError)
}
