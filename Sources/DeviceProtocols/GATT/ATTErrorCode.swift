/// The error code of an ATT Error Response (Core spec Vol 3 Part F 3.4.1.1, Table 3.4, and the Common Profile
/// and Service Error Codes of the Core Specification Supplement Part B).
public enum ATTErrorCode: Sendable, Hashable, CustomStringConvertible {
    case invalidHandle  // 0x01
    case readNotPermitted  // 0x02
    case writeNotPermitted  // 0x03
    case invalidPDU  // 0x04
    case insufficientAuthentication  // 0x05
    case requestNotSupported  // 0x06
    case invalidOffset  // 0x07
    case insufficientAuthorization  // 0x08
    case prepareQueueFull  // 0x09
    case attributeNotFound  // 0x0A
    case attributeNotLong  // 0x0B
    case encryptionKeySizeTooShort  // 0x0C
    case invalidAttributeValueLength  // 0x0D
    case unlikelyError  // 0x0E
    case insufficientEncryption  // 0x0F
    case unsupportedGroupType  // 0x10
    case insufficientResources  // 0x11
    case databaseOutOfSync  // 0x12
    case valueNotAllowed  // 0x13
    /// 0x80...0x9F: defined by the application (the service's own specification).
    case application(UInt8)
    case writeRequestRejected  // 0xFC
    case cccdImproperlyConfigured  // 0xFD
    case procedureAlreadyInProgress  // 0xFE
    case outOfRange  // 0xFF
    /// 0x00, 0x14...0x7F, 0xA0...0xFB: reserved for future use; kept so nothing is lost.
    case reserved(UInt8)

    private static let named: [ATTErrorCode] = [
        .invalidHandle, .readNotPermitted, .writeNotPermitted, .invalidPDU, .insufficientAuthentication,
        .requestNotSupported, .invalidOffset, .insufficientAuthorization, .prepareQueueFull, .attributeNotFound,
        .attributeNotLong, .encryptionKeySizeTooShort, .invalidAttributeValueLength, .unlikelyError,
        .insufficientEncryption, .unsupportedGroupType, .insufficientResources, .databaseOutOfSync,
        .valueNotAllowed,
    ]

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x01...0x13: self = Self.named[Int(rawValue) - 1]
        case 0x80...0x9F: self = .application(rawValue)
        case 0xFC: self = .writeRequestRejected
        case 0xFD: self = .cccdImproperlyConfigured
        case 0xFE: self = .procedureAlreadyInProgress
        case 0xFF: self = .outOfRange
        default: self = .reserved(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .application(let code), .reserved(let code): return code
        case .writeRequestRejected: return 0xFC
        case .cccdImproperlyConfigured: return 0xFD
        case .procedureAlreadyInProgress: return 0xFE
        case .outOfRange: return 0xFF
        default:
            // Every other case is one of `named`, whose index is its code minus one.
            return UInt8(Self.named.firstIndex(of: self).map { $0 + 1 } ?? 0)
        }
    }

    /// The spec's name, e.g. "Insufficient Encryption (0x0f)".
    public var description: String {
        let name: String
        switch self {
        case .invalidHandle: name = "Invalid Handle"
        case .readNotPermitted: name = "Read Not Permitted"
        case .writeNotPermitted: name = "Write Not Permitted"
        case .invalidPDU: name = "Invalid PDU"
        case .insufficientAuthentication: name = "Insufficient Authentication"
        case .requestNotSupported: name = "Request Not Supported"
        case .invalidOffset: name = "Invalid Offset"
        case .insufficientAuthorization: name = "Insufficient Authorization"
        case .prepareQueueFull: name = "Prepare Queue Full"
        case .attributeNotFound: name = "Attribute Not Found"
        case .attributeNotLong: name = "Attribute Not Long"
        case .encryptionKeySizeTooShort: name = "Encryption Key Size Too Short"
        case .invalidAttributeValueLength: name = "Invalid Attribute Value Length"
        case .unlikelyError: name = "Unlikely Error"
        case .insufficientEncryption: name = "Insufficient Encryption"
        case .unsupportedGroupType: name = "Unsupported Group Type"
        case .insufficientResources: name = "Insufficient Resources"
        case .databaseOutOfSync: name = "Database Out Of Sync"
        case .valueNotAllowed: name = "Value Not Allowed"
        case .application: name = "Application Error"
        case .writeRequestRejected: name = "Write Request Rejected"
        case .cccdImproperlyConfigured: name = "Client Characteristic Configuration Descriptor Improperly Configured"
        case .procedureAlreadyInProgress: name = "Procedure Already in Progress"
        case .outOfRange: name = "Out of Range"
        case .reserved: name = "Reserved"
        }
        let hex = String(rawValue, radix: 16)
        return "\(name) (0x\(hex.count < 2 ? "0" : "")\(hex))"
    }
}
