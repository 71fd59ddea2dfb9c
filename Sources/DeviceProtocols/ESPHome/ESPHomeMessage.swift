import BeaconModel

/// Message type numbers of the ESPHome native API (`option (id)` in ESPHome's `api.proto`) used by a
/// Bluetooth proxy without entities.
public enum ESPHomeMessageType {
    public static let helloRequest: UInt32 = 1
    public static let helloResponse: UInt32 = 2
    public static let connectRequest: UInt32 = 3
    public static let connectResponse: UInt32 = 4
    public static let disconnectRequest: UInt32 = 5
    public static let disconnectResponse: UInt32 = 6
    public static let pingRequest: UInt32 = 7
    public static let pingResponse: UInt32 = 8
    public static let deviceInfoRequest: UInt32 = 9
    public static let deviceInfoResponse: UInt32 = 10
    public static let listEntitiesRequest: UInt32 = 11
    public static let listEntitiesDoneResponse: UInt32 = 19
    public static let subscribeStatesRequest: UInt32 = 20
    public static let subscribeLogsRequest: UInt32 = 28
    public static let subscribeHomeassistantServicesRequest: UInt32 = 34
    public static let getTimeRequest: UInt32 = 36
    public static let getTimeResponse: UInt32 = 37
    public static let subscribeHomeAssistantStatesRequest: UInt32 = 38
    public static let subscribeBluetoothLEAdvertisementsRequest: UInt32 = 66
    public static let subscribeBluetoothConnectionsFreeRequest: UInt32 = 80
    public static let bluetoothConnectionsFreeResponse: UInt32 = 81
    public static let unsubscribeBluetoothLEAdvertisementsRequest: UInt32 = 87
    public static let bluetoothLERawAdvertisementsResponse: UInt32 = 93
}

/// A message from an API client, decoded from its type number and protobuf body.
public enum ESPHomeClientMessage: Equatable, Sendable {
    case hello(clientInfo: String, apiMajor: UInt32, apiMinor: UInt32)
    case connect(password: String)
    case disconnectRequest
    case disconnectResponse
    case pingRequest
    case pingResponse
    case deviceInfoRequest
    case listEntitiesRequest
    /// `SubscribeStatesRequest`, `SubscribeLogsRequest`, Home Assistant services/states: nothing to send for
    /// a proxy without entities, accepted so the client's normal start-up works.
    case subscription(type: UInt32)
    case getTimeResponse
    /// `flags` bit 0: raw advertisements (the only kind this proxy sends).
    case subscribeAdvertisements(flags: UInt32)
    case unsubscribeAdvertisements
    case subscribeConnectionsFree
    /// A request about a device's connection (connect, disconnect, services, read, write, notify).
    case connection(ESPHomeConnectionRequest)
    /// A message type this server does not implement (ignored, as ESPHome ignores unknown types).
    case unknown(type: UInt32)

    /// Decodes a message; a malformed body throws, an unknown type is `.unknown`.
    public static func decode(type: UInt32, body: ArraySlice<UInt8>) throws(ESPHomeProtocolError)
        -> ESPHomeClientMessage
    {
        var reader = ProtobufReader(body)
        switch type {
        case ESPHomeMessageType.helloRequest:
            var info = ""
            var major: UInt32 = 0
            var minor: UInt32 = 0
            while let (field, value) = try reader.next() {
                switch field {
                case 1: info = value.text
                case 2: major = UInt32(truncatingIfNeeded: value.integer)
                case 3: minor = UInt32(truncatingIfNeeded: value.integer)
                default: break
                }
            }
            return .hello(clientInfo: info, apiMajor: major, apiMinor: minor)
        case ESPHomeMessageType.connectRequest:
            var password = ""
            while let (field, value) = try reader.next() {
                if field == 1 { password = value.text }
            }
            return .connect(password: password)
        case ESPHomeMessageType.subscribeBluetoothLEAdvertisementsRequest:
            var flags: UInt32 = 0
            while let (field, value) = try reader.next() {
                if field == 1 { flags = UInt32(truncatingIfNeeded: value.integer) }
            }
            return .subscribeAdvertisements(flags: flags)
        case ESPHomeMessageType.bluetoothDeviceRequest, ESPHomeMessageType.bluetoothGATTGetServicesRequest,
            ESPHomeMessageType.bluetoothGATTReadRequest, ESPHomeMessageType.bluetoothGATTWriteRequest,
            ESPHomeMessageType.bluetoothGATTReadDescriptorRequest,
            ESPHomeMessageType.bluetoothGATTWriteDescriptorRequest,
            ESPHomeMessageType.bluetoothGATTNotifyRequest:
            return .connection(try ESPHomeConnectionRequest.decode(type: type, body: body))
        default:
            // Bodies of the remaining messages are not read, but must still parse.
            while try reader.next() != nil {}
            switch type {
            case ESPHomeMessageType.disconnectRequest: return .disconnectRequest
            case ESPHomeMessageType.disconnectResponse: return .disconnectResponse
            case ESPHomeMessageType.pingRequest: return .pingRequest
            case ESPHomeMessageType.pingResponse: return .pingResponse
            case ESPHomeMessageType.deviceInfoRequest: return .deviceInfoRequest
            case ESPHomeMessageType.listEntitiesRequest: return .listEntitiesRequest
            case ESPHomeMessageType.subscribeStatesRequest, ESPHomeMessageType.subscribeLogsRequest,
                ESPHomeMessageType.subscribeHomeassistantServicesRequest,
                ESPHomeMessageType.subscribeHomeAssistantStatesRequest:
                return .subscription(type: type)
            case ESPHomeMessageType.getTimeResponse: return .getTimeResponse
            case ESPHomeMessageType.unsubscribeBluetoothLEAdvertisementsRequest: return .unsubscribeAdvertisements
            case ESPHomeMessageType.subscribeBluetoothConnectionsFreeRequest: return .subscribeConnectionsFree
            default: return .unknown(type: type)
            }
        }
    }
}

/// What the proxy tells a client about itself (`DeviceInfoResponse`, `HelloResponse`).
public struct ESPHomeDeviceIdentity: Sendable, Equatable {
    public var name: String
    public var friendlyName: String
    /// "AA:BB:CC:DD:EE:FF": the node's MAC (`mac_address`) and the scanner's (`bluetooth_mac_address`).
    public var macAddress: String
    public var bluetoothMACAddress: String
    public var model: String
    public var manufacturer: String
    public var version: String
    public var usesPassword: Bool
    public var suggestedArea: String
    /// `project_name` "manufacturer.model" (Home Assistant shows the parts) and `project_version`.
    public var projectName = "BeaconBridge.Gateway"
    /// The proxy holds GATT connections for its clients (`esphome_api.active_connections` with `gatt.enabled`).
    public var activeConnections = false

    public init(
        name: String, friendlyName: String, macAddress: String, bluetoothMACAddress: String,
        model: String = "BeaconBridge", manufacturer: String = "BeaconBridge", version: String,
        usesPassword: Bool, suggestedArea: String = ""
    ) {
        self.name = name
        self.friendlyName = friendlyName
        self.macAddress = macAddress
        self.bluetoothMACAddress = bluetoothMACAddress
        self.model = model
        self.manufacturer = manufacturer
        self.version = version
        self.usesPassword = usesPassword
        self.suggestedArea = suggestedArea
    }

    /// `bluetooth_proxy_feature_flags` of a passive proxy: passive scanning (bit 0) and raw advertisements
    /// (bit 5); no active connections, so Home Assistant never asks this proxy to connect to a device.
    public static let proxyFeatureFlags: UInt32 = 1 << 0 | 1 << 5
    /// Added with active connections: active connections (bit 1) and remote caching (bit 2: the client keeps the
    /// services it discovered and may connect "with cache"; aioesphomeapi connects to no proxy without it). No
    /// pairing (bit 3) and no cache clearing (bit 4): the proxy keeps no cache and does not pair.
    public static let activeConnectionFlags: UInt32 = 1 << 1 | 1 << 2

    /// The flags this proxy advertises.
    public var featureFlags: UInt32 {
        Self.proxyFeatureFlags | (activeConnections ? Self.activeConnectionFlags : 0)
    }
}

/// Encoders of the server's messages: each returns the protobuf body (the frame adds type and length).
public enum ESPHomeServerMessage {
    /// API version 1.10: raw advertisements need 1.9 or later.
    public static let apiVersion: (major: UInt32, minor: UInt32) = (1, 10)

    public static func helloResponse(identity: ESPHomeDeviceIdentity) -> [UInt8] {
        var w = ProtobufWriter()
        w.uint(1, UInt64(apiVersion.major))
        w.uint(2, UInt64(apiVersion.minor))
        w.string(3, "BeaconBridge \(identity.version) (\(identity.name))")
        w.string(4, identity.name)
        return w.bytes
    }

    public static func connectResponse(invalidPassword: Bool) -> [UInt8] {
        var w = ProtobufWriter()
        w.bool(1, invalidPassword)
        return w.bytes
    }

    public static func deviceInfoResponse(identity: ESPHomeDeviceIdentity) -> [UInt8] {
        var w = ProtobufWriter(capacity: 160)
        w.bool(1, identity.usesPassword)
        w.string(2, identity.name)
        w.string(3, identity.macAddress)
        w.string(4, identity.version)
        w.string(6, identity.model)
        w.string(8, identity.projectName)
        w.string(9, identity.version)
        w.string(12, identity.manufacturer)
        w.string(13, identity.friendlyName)
        w.uint(15, UInt64(identity.featureFlags))
        w.string(16, identity.suggestedArea)
        w.string(18, identity.bluetoothMACAddress)
        return w.bytes
    }

    /// `BluetoothConnectionsFreeResponse`: no connection slots (passive proxy).
    public static func connectionsFree() -> [UInt8] { [] }

    /// `BluetoothLERawAdvertisementsResponse` with `advertisements` (repeated field 1).
    public static func rawAdvertisements<C: Collection>(_ advertisements: C) -> [UInt8]
    where C.Element == ESPHomeRawAdvertisement {
        var w = ProtobufWriter(capacity: advertisements.count * 48)
        for advertisement in advertisements {
            w.message(1) { inner in
                inner.uint(1, advertisement.address)
                inner.sint(2, advertisement.rssi)
                inner.uint(3, UInt64(advertisement.addressType))
                inner.bytes(4, advertisement.data)
            }
        }
        return w.bytes
    }
}

/// One advertisement as the proxy forwards it: `BluetoothLERawAdvertisement`.
public struct ESPHomeRawAdvertisement: Sendable, Equatable {
    /// The 48-bit address, most significant byte (the first one printed) in bits 40-47.
    public var address: UInt64
    /// dBm; -127 where the controller reported none (127), as Home Assistant's "no RSSI".
    public var rssi: Int32
    /// The HCI address type (0 public, 1 random, 2/3 identity addresses resolved by the controller).
    public var addressType: UInt32
    /// The advertising (or scan response) data: AD structures as received.
    public var data: [UInt8]

    public init(address: UInt64, rssi: Int32, addressType: UInt32, data: [UInt8]) {
        self.address = address
        self.rssi = rssi
        self.addressType = addressType
        self.data = data
    }

    public init(report: AdvertisingReport) {
        self.init(
            address: report.address.rawValue, rssi: Int32(report.rssi ?? -127),
            addressType: UInt32(report.addressType.rawValue), data: report.data)
    }
}
