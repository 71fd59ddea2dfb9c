/// The Bluetooth proxy's active connections in ESPHome's native API (`api.proto`, "BLUETOOTH", messages 68-88
/// under `USE_BLUETOOTH_PROXY_CONNECTIONS`): what a client asks (connect, disconnect, list services, read,
/// write, notify) and what the proxy answers. Codec only; the server that acts on them holds the connections.
extension ESPHomeMessageType {
    public static let bluetoothDeviceRequest: UInt32 = 68
    public static let bluetoothDeviceConnectionResponse: UInt32 = 69
    public static let bluetoothGATTGetServicesRequest: UInt32 = 70
    public static let bluetoothGATTGetServicesResponse: UInt32 = 71
    public static let bluetoothGATTGetServicesDoneResponse: UInt32 = 72
    public static let bluetoothGATTReadRequest: UInt32 = 73
    public static let bluetoothGATTReadResponse: UInt32 = 74
    public static let bluetoothGATTWriteRequest: UInt32 = 75
    public static let bluetoothGATTReadDescriptorRequest: UInt32 = 76
    public static let bluetoothGATTWriteDescriptorRequest: UInt32 = 77
    public static let bluetoothGATTNotifyRequest: UInt32 = 78
    public static let bluetoothGATTNotifyDataResponse: UInt32 = 79
    public static let bluetoothGATTErrorResponse: UInt32 = 82
    public static let bluetoothGATTWriteResponse: UInt32 = 83
    public static let bluetoothGATTNotifyResponse: UInt32 = 84
    public static let bluetoothDevicePairingResponse: UInt32 = 85
    public static let bluetoothDeviceUnpairingResponse: UInt32 = 86
    public static let bluetoothDeviceClearCacheResponse: UInt32 = 88
}

/// Error numbers in the proxy's answers, as ESP-IDF's (aioesphomeapi's `BLEConnectionError` and
/// `ESPHOME_GATT_ERRORS` describe them to the user); ATT error codes (1-0x7F) pass through as the device gave them.
public enum ESPHomeBluetoothError {
    /// `ESP_GATT_CONN_TIMEOUT`: the device did not answer the connect in time.
    public static let connectTimeout: Int32 = 0x08
    /// `ESP_GATT_CONN_TERMINATE_PEER_USER`: the device ended the connection.
    public static let terminatedByDevice: Int32 = 0x13
    /// `ESP_GATT_CONN_FAIL_ESTABLISH`: the connection could not be made.
    public static let failedToEstablish: Int32 = 0x3E
    /// `ESP_GATT_NO_RESOURCES`: every connection slot is in use.
    public static let noResources: Int32 = 0x80
    /// `ESP_GATT_ERROR`: the proxy cannot do this (e.g. it has no active connections).
    public static let notAvailable: Int32 = 0x85
    /// `ESP_GATT_NOT_CONNECTED`-like answer for a request about a device the proxy is not connected to
    /// (`ESP_GATT_CONN_NONE`).
    public static let notConnected: Int32 = 0x0101
}

/// `BluetoothDeviceRequestType`.
public enum ESPHomeDeviceRequestKind: Sendable, Equatable {
    /// Type 0, the first connect (removed from ESPHome; older clients may still send it).
    case connectV1
    case disconnect
    case pair
    case unpair
    /// The client has the device's services cached and will not ask for them (needs remote caching).
    case connectWithCache
    /// The client will ask for the services after connecting.
    case connectWithoutCache
    case clearCache
    case unknown(UInt32)

    package init(_ raw: UInt32) {
        switch raw {
        case 0: self = .connectV1
        case 1: self = .disconnect
        case 2: self = .pair
        case 3: self = .unpair
        case 4: self = .connectWithCache
        case 5: self = .connectWithoutCache
        case 6: self = .clearCache
        default: self = .unknown(raw)
        }
    }

    public var isConnect: Bool {
        switch self {
        case .connectV1, .connectWithCache, .connectWithoutCache: return true
        default: return false
        }
    }
}

/// A client's request about one device (`address`: the 48-bit address as ESPHome packs it, the first printed
/// byte in bits 40-47; `handle`: an attribute handle, which ESPHome's messages carry as uint32).
public enum ESPHomeConnectionRequest: Sendable, Equatable {
    /// `address_type`: 0 public, 1 random; nil when the client sent neither it nor `has_address_type` (older
    /// clients: the proxy then knows the type from the device's advertisements).
    case device(address: UInt64, kind: ESPHomeDeviceRequestKind, addressType: UInt32?)
    case getServices(address: UInt64)
    case read(address: UInt64, handle: UInt32)
    case write(address: UInt64, handle: UInt32, withResponse: Bool, data: [UInt8])
    case readDescriptor(address: UInt64, handle: UInt32)
    case writeDescriptor(address: UInt64, handle: UInt32, data: [UInt8])
    case notify(address: UInt64, handle: UInt32, enable: Bool)

    public var address: UInt64 {
        switch self {
        case let .device(address, _, _), let .getServices(address), let .read(address, _),
            let .write(address, _, _, _), let .readDescriptor(address, _), let .writeDescriptor(address, _, _),
            let .notify(address, _, _):
            return address
        }
    }

    /// The longest value a write may carry: ATT's 512-byte attribute value.
    public static let maximumValueLength = 512

    /// Decodes one of `ESPHomeMessageType.connectionRequests`; a malformed body, an address beyond 48 bits, a
    /// handle beyond 16 bits or a value longer than 512 bytes throws (a request never reaches a device unchecked).
    public static func decode(type: UInt32, body: ArraySlice<UInt8>) throws(ESPHomeProtocolError)
        -> ESPHomeConnectionRequest
    {
        var reader = ProtobufReader(body)
        var address: UInt64 = 0
        var second: UInt64 = 0
        var third: UInt64 = 0
        var fourth: UInt64 = 0
        var data: [UInt8] = []
        while let (field, value) = try reader.next() {
            switch (field, value) {
            case (1, _): address = value.integer
            case (2, _): second = value.integer
            case (3, .bytes(let slice)) where type != ESPHomeMessageType.bluetoothGATTWriteRequest: data = Array(slice)
            case (3, _): third = value.integer
            case (4, .bytes(let slice)): data = Array(slice)
            case (4, _): fourth = value.integer
            default: break
            }
        }
        guard address != 0, address >> 48 == 0 else {
            throw .malformedMessage("Bluetooth request for address \(address), not a 48-bit device address")
        }
        guard data.count <= maximumValueLength else {
            throw .malformedMessage("Bluetooth write of \(data.count) bytes, more than \(maximumValueLength)")
        }
        func handle() throws(ESPHomeProtocolError) -> UInt32 {
            guard second >= 1, second <= 0xFFFF else {
                throw .malformedMessage("Bluetooth request for handle \(second), not an attribute handle (1-65535)")
            }
            return UInt32(second)
        }
        switch type {
        case ESPHomeMessageType.bluetoothDeviceRequest:
            return .device(
                address: address, kind: ESPHomeDeviceRequestKind(UInt32(truncatingIfNeeded: second)),
                addressType: third != 0 || fourth != 0 ? UInt32(truncatingIfNeeded: fourth) : nil)
        case ESPHomeMessageType.bluetoothGATTGetServicesRequest:
            return .getServices(address: address)
        case ESPHomeMessageType.bluetoothGATTReadRequest:
            return .read(address: address, handle: try handle())
        case ESPHomeMessageType.bluetoothGATTWriteRequest:
            return .write(address: address, handle: try handle(), withResponse: third != 0, data: data)
        case ESPHomeMessageType.bluetoothGATTReadDescriptorRequest:
            return .readDescriptor(address: address, handle: try handle())
        case ESPHomeMessageType.bluetoothGATTWriteDescriptorRequest:
            return .writeDescriptor(address: address, handle: try handle(), data: data)
        case ESPHomeMessageType.bluetoothGATTNotifyRequest:
            return .notify(address: address, handle: try handle(), enable: third != 0)
        default:
            throw .malformedMessage("message type \(type) is not a Bluetooth connection request")
        }
    }
}

/// A discovered service as `BluetoothGATTGetServicesResponse` lists it: its characteristics, each with its
/// descriptors.
public struct ESPHomeServiceListing: Sendable, Equatable {
    public struct Characteristic: Sendable, Equatable {
        public var characteristic: GATTCharacteristic
        public var descriptors: [GATTDescriptor]
        public init(_ characteristic: GATTCharacteristic, descriptors: [GATTDescriptor]) {
            self.characteristic = characteristic
            self.descriptors = descriptors
        }
    }

    public var service: GATTService
    public var characteristics: [Characteristic]
    public init(_ service: GATTService, characteristics: [Characteristic]) {
        self.service = service
        self.characteristics = characteristics
    }
}

extension ESPHomeServerMessage {
    /// `BluetoothDeviceConnectionResponse`: connected (with the ATT MTU) or not, with an error code (0: none).
    public static func deviceConnection(address: UInt64, connected: Bool, mtu: UInt16, error: Int32) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.bool(2, connected)
        w.uint(3, UInt64(mtu))
        w.int32(4, error)
        return w.bytes
    }

    /// `BluetoothGATTGetServicesResponse`: UUIDs as ESPHome's two 64-bit halves (most significant first), the
    /// 16-bit ones expanded on the Bluetooth Base UUID, which every API version reads.
    public static func services(address: UInt64, _ listings: [ESPHomeServiceListing]) -> [UInt8] {
        var w = ProtobufWriter(capacity: 64 + listings.count * 96)
        w.uint(1, address)
        for listing in listings {
            w.message(2) { service in
                service.packedUInt64(1, uuidHalves(listing.service.uuid))
                service.uint(2, UInt64(listing.service.handle))
                for entry in listing.characteristics {
                    service.message(3) { characteristic in
                        characteristic.packedUInt64(1, uuidHalves(entry.characteristic.uuid))
                        characteristic.uint(2, UInt64(entry.characteristic.valueHandle))
                        characteristic.uint(3, UInt64(entry.characteristic.properties.rawValue))
                        for descriptor in entry.descriptors {
                            characteristic.message(4) { inner in
                                inner.packedUInt64(1, uuidHalves(descriptor.uuid))
                                inner.uint(2, UInt64(descriptor.handle))
                            }
                        }
                    }
                }
            }
        }
        return w.bytes
    }

    static func uuidHalves(_ uuid: GATTUUID) -> [UInt64] {
        switch uuid {
        case let .uuid16(short): return [UInt64(short) << 32 | GATTUUID.baseHighLowBits, GATTUUID.baseLow]
        case let .uuid128(high, low): return [high, low]
        }
    }

    /// `BluetoothGATTGetServicesDoneResponse`, `BluetoothDeviceClearCacheResponse` (success, error) and the
    /// other answers that carry an address and a handle.
    public static func servicesDone(address: UInt64) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        return w.bytes
    }

    public static func clearCache(address: UInt64, success: Bool, error: Int32) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.bool(2, success)
        w.int32(3, error)
        return w.bytes
    }

    /// `BluetoothDevicePairingResponse` (`paired`) and `BluetoothDeviceUnpairingResponse` (`success`): same fields.
    public static func pairing(address: UInt64, done: Bool, error: Int32) -> [UInt8] {
        clearCache(address: address, success: done, error: error)
    }

    /// `BluetoothGATTReadResponse` and `BluetoothGATTNotifyDataResponse` (same fields).
    public static func handleData(address: UInt64, handle: UInt16, data: [UInt8]) -> [UInt8] {
        var w = ProtobufWriter(capacity: 16 + data.count)
        w.uint(1, address)
        w.uint(2, UInt64(handle))
        w.bytes(3, data)
        return w.bytes
    }

    /// `BluetoothGATTWriteResponse` and `BluetoothGATTNotifyResponse` (same fields).
    public static func handleDone(address: UInt64, handle: UInt16) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.uint(2, UInt64(handle))
        return w.bytes
    }

    /// `BluetoothGATTErrorResponse`: the ATT error code where the device answered with one (ESP-IDF's GATT status
    /// values use the same numbers), otherwise the proxy's own.
    public static func gattError(address: UInt64, handle: UInt16, error: Int32) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, address)
        w.uint(2, UInt64(handle))
        w.int32(3, error)
        return w.bytes
    }

    /// `BluetoothConnectionsFreeResponse` with connection slots: how many are free, the limit and the addresses of
    /// the allocated ones.
    public static func connectionsFree(free: Int, limit: Int, allocated: [UInt64]) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, UInt64(max(0, free)))
        w.uint(2, UInt64(max(0, limit)))
        w.packedUInt64(3, allocated)
        return w.bytes
    }
}

extension ProtobufWriter {
    /// `int32`: a negative value is sign-extended to ten bytes, as proto3 encodes it.
    public mutating func int32(_ field: Int, _ value: Int32) {
        uint(field, UInt64(bitPattern: Int64(value)))
    }

    /// A packed `repeated uint64` (the proto3 default for repeated scalars); nothing when empty.
    public mutating func packedUInt64(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var inner = ProtobufWriter(capacity: values.count * 10)
        for value in values { inner.varint(value) }
        bytes(field, inner.bytes)
    }
}
