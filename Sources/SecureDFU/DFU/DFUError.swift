import DeviceProtocols

/// The step of a Secure DFU transfer; every `DFUError` names one.
public enum DFUStep: String, Sendable, Hashable {
    case validatePackage
    case setReceiptNotification
    case selectCommand
    case createCommand
    case sendInitPacket
    case executeCommand
    case selectData
    case createData
    case sendFirmware
    case verifyChecksum
    case executeData
}

/// Why a Secure DFU transfer stopped.
public enum DFUError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Refused before anything was sent (`.validatePackage`) or once the target's limits are known (`.selectCommand`).
    case invalidPackage(DFUStep, [DFUPackageProblem])
    /// The target answered with a result other than success.
    case target(DFUStep, SecureDFUResultCode)
    /// The target's offset or CRC-32 disagreed with the image after every retry.
    case checksumMismatch(DFUStep, expectedOffset: Int, offset: Int, expectedCRC: UInt32, crc: UInt32)
    /// A notification that is not the awaited response, or cannot be decoded.
    case malformedResponse(DFUStep, reason: String)
    case timeout(DFUStep)
    /// The link went down; `confirmedBytes` of the image are known to be on the target (resume from there).
    case disconnected(DFUStep, confirmedBytes: Int)
    /// A GATT write failed.
    case link(DFUStep, GATTError)

    public var step: DFUStep {
        switch self {
        case .invalidPackage(let step, _), .target(let step, _), .checksumMismatch(let step, _, _, _, _),
            .malformedResponse(let step, _), .timeout(let step), .disconnected(let step, _), .link(let step, _):
            return step
        }
    }

    public var description: String {
        switch self {
        case .invalidPackage(let step, let problems):
            return "\(step.rawValue): package refused: " + problems.map(\.description).joined(separator: "; ")
        case .target(let step, let result): return "\(step.rawValue): target answered \(result)"
        case .checksumMismatch(let step, let expectedOffset, let offset, let expectedCRC, let crc):
            return
                "\(step.rawValue): target has \(offset) bytes CRC \(crc), expected \(expectedOffset) CRC \(expectedCRC)"
        case .malformedResponse(let step, let reason): return "\(step.rawValue): malformed response: \(reason)"
        case .timeout(let step): return "\(step.rawValue): no response in time"
        case .disconnected(let step, let bytes): return "\(step.rawValue): disconnected after \(bytes) bytes"
        case .link(let step, let error): return "\(step.rawValue): \(error)"
        }
    }
}

/// How far a transfer is.
public struct DFUProgress: Sendable, Hashable {
    /// Image bytes the target has confirmed (by receipt, checksum or execute).
    public var bytes: Int
    public var totalBytes: Int
    /// 0...100, whole percent.
    public var percent: Int
    /// Bytes per second since this transfer started (resumed bytes not counted); nil before time has passed.
    public var bytesPerSecond: Double?
}
