import BeaconFormats
import BeaconModel
import BeaconRuntime
import DeviceProtocols

/// Carrying out one `GATTCommandRequest` (an MQTT command, or a scheduled device information read) over a connection
/// of its own: connect, the operation, disconnect. Blocking: runs on a worker thread (`GATTCommandWorkers`).
public struct GATTCommandExecutor: Sendable {
    public var adapter: AdapterSelector
    public var slots: ConnectionSlots
    public var connectTimeout: Double
    public var requestTimeout: Double

    public init(adapter: AdapterSelector, slots: ConnectionSlots, connectTimeout: Double, requestTimeout: Double) {
        self.adapter = adapter
        self.slots = slots
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
    }

    /// The result members of the reply, or why it failed.
    public func execute(_ command: GATTCommandRequest) -> Result<[(String, JSONValue)], GATTCommandError> {
        guard command.operation != .dfu else {
            return .failure(
                GATTCommandError(
                    kind: "bad_request", step: "op", message: "dfu runs as a firmware update, not as a command"))
        }
        do throws(GATTLinkError) {
            let connection = try GATTConnection.open(
                adapter: adapter, peer: command.address, randomAddress: command.random, timeout: connectTimeout,
                slots: slots, requestTimeout: requestTimeout)
            defer { connection.close() }
            return .success(try run(command, on: connection))
        } catch {
            return .failure(error.commandError)
        }
    }

    func run(_ command: GATTCommandRequest, on connection: GATTConnection) throws(GATTLinkError) -> [(
        String, JSONValue
    )] {
        switch command.operation {
        case .services:
            var services: [JSONValue] = []
            for (service, characteristics) in try connection.discoverAll() {
                services.append(
                    .object([
                        ("uuid", .string("\(service.uuid)")), ("start", .int(Int64(service.handle))),
                        ("end", .int(Int64(service.endHandle))),
                        (
                            "characteristics",
                            .array(
                                characteristics.map {
                                    .object([
                                        ("uuid", .string("\($0.uuid)")), ("handle", .int(Int64($0.valueHandle))),
                                        ("properties", .array($0.properties.names.map(JSONValue.string))),
                                    ])
                                })
                        ),
                    ]))
            }
            return [("services", .array(services))]
        case .read:
            guard let uuid = command.uuid else { return [] }
            return [("uuid", .string("\(uuid)"))] + Self.valueMembers(try connection.read(uuid))
        case .write:
            guard let uuid = command.uuid else { return [] }
            try connection.write(uuid, value: command.value, withResponse: command.withResponse)
            return [("uuid", .string("\(uuid)")), ("written", .int(Int64(command.value.count)))]
        case .subscribe:
            guard let uuid = command.uuid else { return [] }
            var values: [JSONValue] = []
            var valueHandle: UInt16?
            connection.onNotification = { notification in
                guard notification.handle == valueHandle, values.count < 100 else { return }
                values.append(.string(HexText.hex(notification.value)))
            }
            valueHandle = try connection.subscribe(uuid).valueHandle
            try connection.waitForNotifications(until: SystemClock.monotonic() + command.seconds) {
                command.count.map { values.count >= $0 } ?? false
            }
            return [("uuid", .string("\(uuid)")), ("notifications", .array(values))]
        case .info:
            return try Self.information(connection, fields: GATTSettings.InfoField.allCases)
        case .dfu:
            return []
        }
    }

    /// Reads the fields the device has (a missing characteristic is left out, any other failure ends the read).
    public static func information(_ connection: GATTConnection, fields: [GATTSettings.InfoField])
        throws(GATTLinkError) -> [(String, JSONValue)]
    {
        var members: [(String, JSONValue)] = []
        for field in fields {
            let value: [UInt8]
            do { value = try connection.read(field.uuid) } catch {
                if case .notFound = error.kind { continue }
                throw error
            }
            switch field {
            case .battery:
                guard value.count == 1, value[0] <= 100 else { continue }
                members.append(("battery", .int(Int64(value[0]))))
            case .firmware, .hardware:
                members.append((field.rawValue, .string(Self.text(value))))
            }
        }
        return members
    }

    /// A revision string: UTF-8, trailing NULs cut, at most 64 characters.
    static func text(_ value: [UInt8]) -> String {
        var bytes = value.prefix(64)
        while bytes.last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` (hex) and, when the value is 2 or more printable ASCII characters, `text`.
    static func valueMembers(_ value: [UInt8]) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("value", .string(HexText.hex(value)))]
        if value.count >= 2, value.allSatisfy({ (0x20...0x7E).contains($0) }) {
            members.append(("text", .string(String(decoding: value, as: UTF8.self))))
        }
        return members
    }
}

extension GATTLinkError {
    /// The error a command's reply carries: a kind for programs, the step, the full message.
    public var commandError: GATTCommandError {
        let name: String
        switch kind {
        case .adapter: name = "adapter"
        case .noSlot: name = "no_slot"
        case .alreadyConnected: name = "busy"
        case .connectTimeout: name = "connect_timeout"
        case .refused: name = "refused"
        case .hostDown: name = "unreachable"
        case .disconnected: name = "disconnected"
        case .notFound: name = "not_found"
        case .system: name = "system"
        case .gatt(let error): name = error.commandKind
        }
        return GATTCommandError(kind: name, step: step, message: description)
    }
}

extension GATTError {
    /// A command reply's error kind for this GATT failure (`timeout`, `att_error`, ...).
    public var commandKind: String {
        switch self {
        case .timeout: "timeout"
        case .notFound: "not_found"
        case .refused: "att_error"
        case .insufficientAuthentication: "insufficient_authentication"
        case .insufficientEncryption: "insufficient_encryption"
        case .disconnected: "disconnected"
        case .malformedResponse: "malformed_response"
        case .valueTooLong: "value_too_long"
        }
    }
}

extension GATTCharacteristicProperties {
    /// The properties' names (`read`, `write`, `notify`...), in the order of the declaration's bits.
    public var names: [String] {
        let all: [(GATTCharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
            (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
            (.authenticatedSignedWrites, "signed-write"), (.extendedProperties, "extended"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}
