/// One Attribute Protocol PDU, as a GATT client sends or receives it (Core spec Vol 3 Part F 3.4).
///
/// `ATTPDU.decode(_:)` reads untrusted bytes through a `ByteCursor` and throws a `DecodeError` for anything it
/// cannot read (truncated, wrong lengths, inconsistent list formats); it never traps. Opcodes a client neither
/// sends nor expects decode to `.other` with their parameters, so the caller can answer a peer's request with
/// Request Not Supported. `encode()` writes the same layout back; round trips are exact.
public enum ATTPDU: Sendable, Hashable {
    case errorResponse(requestOpcode: UInt8, handle: UInt16, code: ATTErrorCode)
    case exchangeMTURequest(clientRxMTU: UInt16)
    case exchangeMTUResponse(serverRxMTU: UInt16)
    case findInformationRequest(start: UInt16, end: UInt16)
    /// Handle and type pairs; all of one UUID size (format 0x01: 16-bit, 0x02: 128-bit).
    case findInformationResponse([ATTHandleType])
    case readByTypeRequest(start: UInt16, end: UInt16, type: GATTUUID)
    /// Handle and value pairs; every value has the same length.
    case readByTypeResponse([ATTHandleValue])
    case readRequest(handle: UInt16)
    case readResponse(value: [UInt8])
    case readBlobRequest(handle: UInt16, offset: UInt16)
    case readBlobResponse(value: [UInt8])
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: GATTUUID)
    /// Group start, end and value; every value has the same length.
    case readByGroupTypeResponse([ATTGroupValue])
    case writeRequest(handle: UInt16, value: [UInt8])
    case writeResponse
    case writeCommand(handle: UInt16, value: [UInt8])
    case handleValueNotification(handle: UInt16, value: [UInt8])
    case handleValueIndication(handle: UInt16, value: [UInt8])
    case handleValueConfirmation
    /// Any other opcode, with its parameters as received.
    case other(opcode: UInt8, parameters: [UInt8])

    /// The first byte on the wire.
    public var opcode: UInt8 {
        switch self {
        case .errorResponse: return ATTOpcode.errorResponse
        case .exchangeMTURequest: return ATTOpcode.exchangeMTURequest
        case .exchangeMTUResponse: return ATTOpcode.exchangeMTUResponse
        case .findInformationRequest: return ATTOpcode.findInformationRequest
        case .findInformationResponse: return ATTOpcode.findInformationResponse
        case .readByTypeRequest: return ATTOpcode.readByTypeRequest
        case .readByTypeResponse: return ATTOpcode.readByTypeResponse
        case .readRequest: return ATTOpcode.readRequest
        case .readResponse: return ATTOpcode.readResponse
        case .readBlobRequest: return ATTOpcode.readBlobRequest
        case .readBlobResponse: return ATTOpcode.readBlobResponse
        case .readByGroupTypeRequest: return ATTOpcode.readByGroupTypeRequest
        case .readByGroupTypeResponse: return ATTOpcode.readByGroupTypeResponse
        case .writeRequest: return ATTOpcode.writeRequest
        case .writeResponse: return ATTOpcode.writeResponse
        case .writeCommand: return ATTOpcode.writeCommand
        case .handleValueNotification: return ATTOpcode.handleValueNotification
        case .handleValueIndication: return ATTOpcode.handleValueIndication
        case .handleValueConfirmation: return ATTOpcode.handleValueConfirmation
        case .other(let opcode, _): return opcode
        }
    }
}

/// A handle and an attribute type, one entry of a Find Information Response.
public struct ATTHandleType: Sendable, Hashable {
    public var handle: UInt16
    public var type: GATTUUID
    public init(handle: UInt16, type: GATTUUID) {
        self.handle = handle
        self.type = type
    }
}

/// A handle and a value, one entry of a Read By Type Response.
public struct ATTHandleValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// A group's first and last handle and its value, one entry of a Read By Group Type Response.
public struct ATTGroupValue: Sendable, Hashable {
    public var handle: UInt16
    public var endGroupHandle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.endGroupHandle = endGroupHandle
        self.value = value
    }
}

/// ATT opcodes (Core spec Vol 3 Part F 3.4.8, Table 3.37).
public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readMultipleRequest: UInt8 = 0x0E
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let executeWriteRequest: UInt8 = 0x18
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let readMultipleVariableRequest: UInt8 = 0x20
    public static let writeCommand: UInt8 = 0x52
    public static let signedWriteCommand: UInt8 = 0xD2

    /// Requests a server must answer (with a response or an Error Response); everything else is a response,
    /// a command, a notification, an indication or a confirmation.
    public static func isRequest(_ opcode: UInt8) -> Bool {
        switch opcode {
        case exchangeMTURequest, findInformationRequest, findByTypeValueRequest, readByTypeRequest, readRequest,
            readBlobRequest, readMultipleRequest, readByGroupTypeRequest, writeRequest, prepareWriteRequest,
            executeWriteRequest, readMultipleVariableRequest:
            return true
        default:
            return false
        }
    }
}
