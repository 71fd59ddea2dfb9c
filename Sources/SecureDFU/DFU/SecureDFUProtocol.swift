import BeaconModel
import DeviceProtocols

/// Nordic Secure DFU over BLE: the service, its characteristics and the control point's opcodes
/// (nRF5 SDK "DFU protocol", BLE transport).
public enum SecureDFUProtocol {
    /// The DFU service (16-bit, Nordic's SIG member UUID).
    public static let service = GATTUUID.uuid16(0xFE59)
    /// Control Point: write with response, notify; requests and their responses.
    public static let controlPoint = GATTUUID("8ec90001-f315-4f60-9fb8-838830daea50")!
    /// Packet: write without response; object bytes.
    public static let packet = GATTUUID("8ec90002-f315-4f60-9fb8-838830daea50")!

    public static let create: UInt8 = 0x01
    public static let setReceiptNotification: UInt8 = 0x02
    public static let calculateChecksum: UInt8 = 0x03
    public static let execute: UInt8 = 0x04
    public static let select: UInt8 = 0x06
    public static let response: UInt8 = 0x60

    /// Object types of Create and Select.
    public enum ObjectType: UInt8, Sendable {
        case command = 0x01
        case data = 0x02
    }

    static func createRequest(_ type: ObjectType, size: Int) -> [UInt8] {
        [create, type.rawValue] + littleEndian(UInt32(truncatingIfNeeded: size))
    }
    static func setReceiptNotificationRequest(_ interval: UInt16) -> [UInt8] {
        [setReceiptNotification, UInt8(truncatingIfNeeded: interval), UInt8(truncatingIfNeeded: interval >> 8)]
    }
    static func selectRequest(_ type: ObjectType) -> [UInt8] { [select, type.rawValue] }

    package static func littleEndian(_ value: UInt32) -> [UInt8] {
        [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    }
}

/// A control point response's result code.
public enum SecureDFUResultCode: Sendable, Hashable, CustomStringConvertible {
    case invalidCode  // 0x00
    case success  // 0x01
    case opcodeNotSupported  // 0x02
    case invalidParameter  // 0x03
    case insufficientResources  // 0x04
    case invalidObject  // 0x05
    case unsupportedType  // 0x07
    case operationNotPermitted  // 0x08
    case operationFailed  // 0x0A
    case extendedError(SecureDFUExtendedError)  // 0x0B, then the extended error byte
    case unknown(UInt8)

    public var description: String {
        switch self {
        case .invalidCode: return "invalid code"
        case .success: return "success"
        case .opcodeNotSupported: return "opcode not supported"
        case .invalidParameter: return "invalid parameter"
        case .insufficientResources: return "insufficient resources"
        case .invalidObject: return "invalid object"
        case .unsupportedType: return "unsupported type"
        case .operationNotPermitted: return "operation not permitted"
        case .operationFailed: return "operation failed"
        case .extendedError(let extended): return "extended error: \(extended)"
        case .unknown(let code): return "unknown result \(code)"
        }
    }
}

/// The extended error that follows result code 0x0B.
public enum SecureDFUExtendedError: UInt8, Sendable, Hashable, CustomStringConvertible {
    case noError = 0x00
    case invalidErrorCode = 0x01
    case wrongCommandFormat = 0x02
    case unknownCommand = 0x03
    case initCommandInvalid = 0x04
    case firmwareVersionFailure = 0x05
    case hardwareVersionFailure = 0x06
    case softDeviceVersionFailure = 0x07
    case signatureMissing = 0x08
    case wrongHashType = 0x09
    case hashFailed = 0x0A
    case wrongSignatureType = 0x0B
    case verificationFailed = 0x0C
    case insufficientSpace = 0x0D

    public var description: String {
        switch self {
        case .noError: return "no error"
        case .invalidErrorCode: return "invalid error code"
        case .wrongCommandFormat: return "wrong command format"
        case .unknownCommand: return "unknown command"
        case .initCommandInvalid: return "init command invalid"
        case .firmwareVersionFailure: return "firmware version too low"
        case .hardwareVersionFailure: return "hardware version mismatch"
        case .softDeviceVersionFailure: return "SoftDevice requirement not met"
        case .signatureMissing: return "signature missing"
        case .wrongHashType: return "wrong hash type"
        case .hashFailed: return "hash failed"
        case .wrongSignatureType: return "wrong signature type"
        case .verificationFailed: return "verification failed"
        case .insufficientSpace: return "insufficient space"
        }
    }
}

/// A parsed control point notification: `0x60, request opcode, result[, extended error | payload]`.
public struct SecureDFUResponse: Sendable, Hashable {
    public var requestOpcode: UInt8
    public var result: SecureDFUResultCode
    /// Select: maximum object size; otherwise 0.
    public var maximumSize: UInt32 = 0
    /// Select and Calculate Checksum: the target's offset and CRC-32 of the object type's bytes so far.
    public var offset: UInt32 = 0
    public var crc: UInt32 = 0

    public init(
        requestOpcode: UInt8, result: SecureDFUResultCode, maximumSize: UInt32 = 0, offset: UInt32 = 0, crc: UInt32 = 0
    ) {
        self.requestOpcode = requestOpcode
        self.result = result
        self.maximumSize = maximumSize
        self.offset = offset
        self.crc = crc
    }

    /// Decodes a notification; never traps.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> SecureDFUResponse {
        var cursor = ByteCursor(bytes)
        let marker = try cursor.readUInt8("response opcode")
        guard marker == SecureDFUProtocol.response else {
            throw DecodeError(offset: 0, reason: "opcode \(marker) is not a response (0x60)")
        }
        let request = try cursor.readUInt8("request opcode")
        let code = try cursor.readUInt8("result code")
        var response = SecureDFUResponse(requestOpcode: request, result: .success)
        switch code {
        case 0x00: response.result = .invalidCode
        case 0x01: response.result = .success
        case 0x02: response.result = .opcodeNotSupported
        case 0x03: response.result = .invalidParameter
        case 0x04: response.result = .insufficientResources
        case 0x05: response.result = .invalidObject
        case 0x07: response.result = .unsupportedType
        case 0x08: response.result = .operationNotPermitted
        case 0x0A: response.result = .operationFailed
        case 0x0B:
            let at = cursor.offset
            let extended = try cursor.readUInt8("extended error")
            guard let known = SecureDFUExtendedError(rawValue: extended) else {
                throw DecodeError(offset: at, reason: "unknown extended error \(extended)")
            }
            response.result = .extendedError(known)
        default: response.result = .unknown(code)
        }
        guard response.result == .success else { return response }
        switch request {
        case SecureDFUProtocol.select:
            response.maximumSize = try cursor.readUInt32LE("maximum object size")
            response.offset = try cursor.readUInt32LE("offset")
            response.crc = try cursor.readUInt32LE("CRC")
        case SecureDFUProtocol.calculateChecksum:
            response.offset = try cursor.readUInt32LE("offset")
            response.crc = try cursor.readUInt32LE("CRC")
        default:
            break
        }
        return response
    }

    /// The bytes a target sends (used by test targets and round-trip tests).
    public func encode() -> [UInt8] {
        var out: [UInt8] = [SecureDFUProtocol.response, requestOpcode]
        switch result {
        case .invalidCode: out.append(0x00)
        case .success: out.append(0x01)
        case .opcodeNotSupported: out.append(0x02)
        case .invalidParameter: out.append(0x03)
        case .insufficientResources: out.append(0x04)
        case .invalidObject: out.append(0x05)
        case .unsupportedType: out.append(0x07)
        case .operationNotPermitted: out.append(0x08)
        case .operationFailed: out.append(0x0A)
        case .extendedError(let extended): out += [0x0B, extended.rawValue]
        case .unknown(let code): out.append(code)
        }
        guard result == .success else { return out }
        if requestOpcode == SecureDFUProtocol.select { out += SecureDFUProtocol.littleEndian(maximumSize) }
        if requestOpcode == SecureDFUProtocol.select || requestOpcode == SecureDFUProtocol.calculateChecksum {
            out += SecureDFUProtocol.littleEndian(offset) + SecureDFUProtocol.littleEndian(crc)
        }
        return out
    }
}
