/// The GATT procedure during which something happened; every `GATTError` names one.
public enum GATTStep: String, Sendable, Hashable {
    case exchangeMTU
    case discoverServices
    case discoverCharacteristics
    case discoverDescriptors
    case read
    case write
    case writeWithoutResponse
    case subscribe
    /// A PDU from the peer that belongs to no request of ours (a response with none outstanding, a malformed
    /// notification).
    case unsolicited
}

/// Why a GATT procedure failed. Each case names the step; none is thrown by a trap.
public enum GATTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No response within the ATT transaction timeout (30 s, or the client's shorter `requestTimeout`). The
    /// bearer is unusable afterwards (Core spec Vol 3 Part F 3.3.3): the client closes it and fails everything
    /// queued with `.disconnected`.
    case timeout(GATTStep)
    /// The peer has no such attribute (Attribute Not Found or Invalid Handle) at `handle`.
    case notFound(GATTStep, handle: UInt16)
    /// The peer refused the request with this ATT error.
    case refused(GATTStep, ATTErrorCode, handle: UInt16)
    /// Insufficient Authentication or Authorization: the link needs pairing (bonding) first.
    case insufficientAuthentication(GATTStep, ATTErrorCode)
    /// Insufficient Encryption or Encryption Key Size Too Short: the link needs encryption first.
    case insufficientEncryption(GATTStep, ATTErrorCode)
    /// The link went down (or was closed after a timeout) before the procedure completed.
    case disconnected(GATTStep)
    /// The peer answered with something a conforming server cannot send: wrong opcode, truncated or oversized
    /// PDU, handles out of range or going backwards, a value longer than 512 bytes.
    case malformedResponse(GATTStep, reason: String)
    /// The caller asked for something the link cannot carry (a value longer than MTU - 3 for a write).
    case valueTooLong(GATTStep, length: Int, maximum: Int)

    public var step: GATTStep {
        switch self {
        case .timeout(let step), .notFound(let step, _), .refused(let step, _, _),
            .insufficientAuthentication(let step, _), .insufficientEncryption(let step, _), .disconnected(let step),
            .malformedResponse(let step, _), .valueTooLong(let step, _, _):
            return step
        }
    }

    /// Maps an Error Response to the error callers act on.
    package static func from(_ code: ATTErrorCode, handle: UInt16, step: GATTStep) -> GATTError {
        switch code {
        case .attributeNotFound, .invalidHandle: return .notFound(step, handle: handle)
        case .insufficientAuthentication, .insufficientAuthorization: return .insufficientAuthentication(step, code)
        case .insufficientEncryption, .encryptionKeySizeTooShort: return .insufficientEncryption(step, code)
        default: return .refused(step, code, handle: handle)
        }
    }

    public var description: String {
        switch self {
        case .timeout(let step): return "\(step.rawValue): no response within the ATT transaction timeout"
        case .notFound(let step, let handle): return "\(step.rawValue): attribute not found at handle \(handle)"
        case .refused(let step, let code, let handle): return "\(step.rawValue): refused at handle \(handle): \(code)"
        case .insufficientAuthentication(let step, let code): return "\(step.rawValue): pairing needed: \(code)"
        case .insufficientEncryption(let step, let code): return "\(step.rawValue): encryption needed: \(code)"
        case .disconnected(let step): return "\(step.rawValue): disconnected"
        case .malformedResponse(let step, let reason): return "\(step.rawValue): malformed response: \(reason)"
        case .valueTooLong(let step, let length, let maximum):
            return "\(step.rawValue): value of \(length) bytes, at most \(maximum) fit"
        }
    }
}
