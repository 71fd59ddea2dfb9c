import BeaconConfigReading
import BeaconModel

/// A GATT command received over MQTT (`<prefix>/<gateway>/command/gatt/<op>`, docs/gatt.md) and its reply
/// (`<prefix>/<gateway>/reply/gatt/<op>`). Every payload is untrusted: `GATTCommandRequest.parse` never traps and turns
/// anything it cannot use into a `GATTCommandFailure` that still names the request's id when it had one, so the
/// caller can answer it.
public struct GATTCommandRequest: Sendable, Equatable {
    public enum Operation: String, Sendable, CaseIterable {
        /// Every primary service and its characteristics.
        case services
        /// The value of one characteristic (`uuid`).
        case read
        /// Write `value` to `uuid` (Write Request, or Write Command with `"response": false`).
        case write
        /// Turn notifications of `uuid` on and collect them for `seconds` (at most `count`).
        case subscribe
        /// Firmware and hardware revision and battery level (those the device has).
        case info
        /// A Secure DFU update with the device's configured package (`gatt.devices[].firmware`), or `package`: a
        /// file name in that package's directory; `force` sends even when the device reports the same version.
        case dfu
    }

    public var operation: Operation
    /// The requester's id, echoed in the reply (1-128 characters).
    public var id: String
    public var address: BluetoothAddress
    public var random: Bool
    public var uuid: GATTUUID?
    public var value: [UInt8]
    public var withResponse: Bool
    /// `subscribe`: how long to collect notifications (1-30 s, default 5) and after how many to stop (1-100).
    public var seconds: Double
    public var count: Int?
    /// `dfu`: a package file name in the directory of the device's configured package (no path: a command can
    /// never make the gateway read another directory); nil: the configured package.
    public var package: String?
    public var force: Bool
    /// The configured device (`gatt.devices[].name`) the request named with `device`, or the one with its address.
    public var device: String?

    public init(
        operation: Operation, id: String, address: BluetoothAddress, random: Bool = false, uuid: GATTUUID? = nil,
        value: [UInt8] = [], withResponse: Bool = true, seconds: Double = 5, count: Int? = nil,
        package: String? = nil, force: Bool = false, device: String? = nil
    ) {
        self.operation = operation
        self.id = id
        self.address = address
        self.random = random
        self.uuid = uuid
        self.value = value
        self.withResponse = withResponse
        self.seconds = seconds
        self.count = count
        self.package = package
        self.force = force
        self.device = device
    }

    /// Largest payload accepted (bytes).
    public static let maxPayload = 4096
    /// Largest `id` (characters).
    public static let maxIDLength = 128
    /// Largest written value (bytes; the link refuses more than ATT_MTU - 3 in any case).
    public static let maxValue = 512

    /// The operation of a command topic's last level; nil for an unknown one.
    public static func operation(inTopic topic: String, commandBase: String) -> Substring? {
        guard topic.hasPrefix(commandBase + "/") else { return nil }
        return topic.dropFirst(commandBase.count + 1)
    }

    /// Largest `package` file name (bytes).
    public static let maxPackageName = 128

    /// Decodes one command. `op` is the topic's last level. On failure the id (when the payload had a usable
    /// one) comes back with the error so the reply can name it. `devices`: the configured devices, which a
    /// request may name with `device` instead of `address`.
    public static func parse(
        op: Substring, payload: [UInt8], devices: [GATTSettings.Device] = []
    ) -> Result<GATTCommandRequest, GATTCommandFailure> {
        var failure = GATTCommandFailure(id: nil, error: .badRequest(step: "parse", ""))
        func fail(_ error: GATTCommandError) -> Result<GATTCommandRequest, GATTCommandFailure> {
            failure.error = error
            return .failure(failure)
        }
        guard payload.count <= maxPayload else {
            return fail(.badRequest(step: "parse", "payload of \(payload.count) bytes, at most \(maxPayload)"))
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: String(decoding: payload, as: UTF8.self), maxDepth: 4)
        } catch {
            return fail(.badRequest(step: "parse", "\(error)"))
        }
        guard case .object(let members) = json else {
            return fail(.badRequest(step: "parse", "expected a JSON object"))
        }
        if case .string(let text) = json["id"], !text.isEmpty, text.count <= maxIDLength { failure.id = text }
        guard let operation = Operation(rawValue: String(op)) else {
            let known = Operation.allCases.map(\.rawValue).joined(separator: ", ")
            return fail(.unknownOperation("`\(op.prefix(32))` is not an operation (\(known))"))
        }
        let known: Set<String> = [
            "id", "address", "device", "random", "uuid", "value", "response", "seconds", "count", "package", "force",
        ]
        if let unknown = members.first(where: { !known.contains($0.0) }) {
            return fail(.badRequest(step: "id", "unknown field `\(unknown.0.prefix(32))`"))
        }
        guard let id = failure.id else {
            return fail(.badRequest(step: "id", "`id` must be a string of 1-\(maxIDLength) characters"))
        }
        var command: GATTCommandRequest
        switch (json["address"], json["device"]) {
        case (.some, .some):
            return fail(.badRequest(step: "device", "give `address` or `device`, not both"))
        case (nil, .some(let name)):
            guard case .string(let text) = name, let device = devices.first(where: { $0.name == text }) else {
                let names = devices.prefix(8).map(\.name).joined(separator: ", ")
                return fail(
                    .badRequest(
                        step: "device",
                        "`device` must name a configured device (gatt.devices: \(names.isEmpty ? "none" : names))"))
            }
            command = GATTCommandRequest(
                operation: operation, id: id, address: device.address, random: device.random, device: device.name)
        default:
            guard case .string(let addressText) = json["address"], let address = BluetoothAddress(string: addressText)
            else {
                return fail(
                    .badRequest(
                        step: "address", "`address` (AA:BB:CC:DD:EE:FF) or `device` (a configured name) is needed"))
            }
            command = GATTCommandRequest(
                operation: operation, id: id, address: address,
                device: devices.first(where: { $0.address == address })?.name)
        }
        switch json["random"] {
        case nil, .null: break
        case .bool(let random): command.random = random
        default: return fail(.badRequest(step: "random", "`random` must be true or false"))
        }
        switch json["response"] {
        case nil, .null: break
        case .bool(let response): command.withResponse = response
        default: return fail(.badRequest(step: "response", "`response` must be true or false"))
        }
        let needsUUID: Set<Operation> = [.read, .write, .subscribe]
        switch json["uuid"] {
        case nil, .null:
            if needsUUID.contains(operation) {
                return fail(.badRequest(step: "uuid", "`\(operation.rawValue)` needs `uuid` (e.g. \"2a19\")"))
            }
        case .string(let text):
            guard let uuid = GATTUUID(text), text.count <= 38 else {
                return fail(.badRequest(step: "uuid", "`uuid` must be 2a19, 0x2A19 or a dashed 128-bit UUID"))
            }
            guard needsUUID.contains(operation) else {
                return fail(.badRequest(step: "uuid", "`\(operation.rawValue)` takes no `uuid`"))
            }
            command.uuid = uuid
        default: return fail(.badRequest(step: "uuid", "`uuid` must be a string"))
        }
        switch json["value"] {
        case nil, .null:
            if operation == .write { return fail(.badRequest(step: "value", "`write` needs `value` (hex)")) }
        case .string(let text):
            guard operation == .write else {
                return fail(.badRequest(step: "value", "`\(operation.rawValue)` takes no `value`"))
            }
            guard let bytes = HexBytes.parse(text), bytes.count <= maxValue else {
                return fail(
                    .badRequest(
                        step: "value", "`value` must be hex, an even number of digits, at most \(maxValue) bytes"))
            }
            command.value = bytes
        default: return fail(.badRequest(step: "value", "`value` must be a hex string"))
        }
        if let seconds = json["seconds"] {
            let number: Double? =
                switch seconds {
                case .int(let value): Double(value)
                case .double(let value): value
                default: nil
                }
            guard operation == .subscribe, let number, number >= 1, number <= 30 else {
                return fail(.badRequest(step: "seconds", "`seconds` is for `subscribe`: 1-30"))
            }
            command.seconds = number
        }
        if let count = json["count"] {
            guard operation == .subscribe, case .int(let number) = count, (1...100).contains(number) else {
                return fail(.badRequest(step: "count", "`count` is for `subscribe`: 1-100"))
            }
            command.count = Int(number)
        }
        switch json["force"] {
        case nil, .null: break
        case .bool(let force) where operation == .dfu: command.force = force
        default: return fail(.badRequest(step: "force", "`force` is for `dfu`: true or false"))
        }
        switch json["package"] {
        case nil, .null: break
        case .string(let name) where operation == .dfu:
            guard Self.isPackageName(name) else {
                return fail(
                    .badRequest(
                        step: "package",
                        "`package` must be a file name of 1-\(maxPackageName) bytes (letters, digits, `.`, `_`, `-`; "
                            + "no `/`, not starting with `.`), in the directory of the device's configured package"))
            }
            command.package = name
        default: return fail(.badRequest(step: "package", "`package` is for `dfu`: a file name"))
        }
        return .success(command)
    }

    /// A file name only: no directory part, no `..`, nothing a shell or a log would misread.
    static func isPackageName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maxPackageName, name.utf8.first != UInt8(ascii: ".") else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

/// Why a command failed, as its reply says it: a kind for programs, the step where it happened, a message for
/// people.
public struct GATTCommandError: Error, Sendable, Equatable {
    public var kind: String
    public var step: String
    public var message: String

    public init(kind: String, step: String, message: String) {
        self.kind = kind
        self.step = step
        self.message = message
    }

    public static func badRequest(step: String, _ message: String) -> GATTCommandError {
        GATTCommandError(kind: "bad_request", step: step, message: message)
    }
    public static func unknownOperation(_ message: String) -> GATTCommandError {
        GATTCommandError(kind: "unknown_operation", step: "topic", message: message)
    }
}

/// A request that cannot be carried out, with its id when it had a usable one.
public struct GATTCommandFailure: Error, Sendable, Equatable {
    public var id: String?
    public var error: GATTCommandError

    public init(id: String?, error: GATTCommandError) {
        self.id = id
        self.error = error
    }
}

/// The reply payloads: `{"id": ..., "ok": true, ...result}` or `{"id": ..., "ok": false, "error": {"kind",
/// "step", "message"}}`; `id` is null when the request had no usable one.
public enum GATTCommandReply {
    public static func success(
        id: String, op: GATTCommandRequest.Operation, address: BluetoothAddress, _ result: [(String, JSONValue)]
    )
        -> String
    {
        JSONValue.object(
            [
                ("id", .string(id)), ("ok", .bool(true)), ("op", .string(op.rawValue)),
                ("address", .string(address.description)),
            ]
                + result
        ).serialized
    }

    public static func failure(id: String?, _ error: GATTCommandError) -> String {
        JSONValue.object([
            ("id", id.map(JSONValue.string) ?? .null), ("ok", .bool(false)),
            (
                "error",
                .object([
                    ("kind", .string(error.kind)), ("step", .string(error.step)), ("message", .string(error.message)),
                ])
            ),
        ]).serialized
    }

    /// The reply topic's last level: the operation, or `invalid` for a topic level that is none.
    public static func level(for op: Substring) -> String {
        GATTCommandRequest.Operation(rawValue: String(op))?.rawValue ?? "invalid"
    }
}
