/// A primary service found by discovery: its type and handle range.
public struct GATTService: Sendable, Hashable {
    public var uuid: GATTUUID
    public var handle: UInt16
    public var endHandle: UInt16
    public init(uuid: GATTUUID, handle: UInt16, endHandle: UInt16) {
        self.uuid = uuid
        self.handle = handle
        self.endHandle = endHandle
    }
}

/// A characteristic found by discovery. `endHandle` is the last handle of its descriptors: the handle before
/// the next characteristic's declaration, or its service's end.
public struct GATTCharacteristic: Sendable, Hashable {
    public var uuid: GATTUUID
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    public var properties: GATTCharacteristicProperties
    public var endHandle: UInt16
    public init(
        uuid: GATTUUID, declarationHandle: UInt16, valueHandle: UInt16, properties: GATTCharacteristicProperties,
        endHandle: UInt16
    ) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.properties = properties
        self.endHandle = endHandle
    }
}

/// A descriptor found by discovery (e.g. the CCCD, 0x2902).
public struct GATTDescriptor: Sendable, Hashable {
    public var uuid: GATTUUID
    public var handle: UInt16
    public init(uuid: GATTUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }
}

/// Characteristic properties (Core spec Vol 3 Part G 3.3.1.1).
public struct GATTCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// What a CCCD write asks the server to send.
public enum GATTSubscription: Sendable, Hashable {
    case none
    case notifications
    case indications

    /// The CCCD value, little endian.
    public var cccdValue: [UInt8] {
        switch self {
        case .none: return [0x00, 0x00]
        case .notifications: return [0x01, 0x00]
        case .indications: return [0x02, 0x00]
        }
    }
}
