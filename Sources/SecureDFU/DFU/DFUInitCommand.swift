/// The fields of a Secure DFU init packet (`.dat`) this gateway checks before a transfer: the protobuf `Packet`
/// of the nRF5 SDK's `dfu-cc.proto` (a `Command`, or a `SignedCommand` holding one, whose `InitCommand` carries
/// the versions and the image sizes). The hash and signature are the target's to verify and are not checked here.
public struct DFUInitCommand: Sendable, Hashable {
    public var firmwareVersion: UInt32?
    public var hardwareVersion: UInt32?
    /// Firmware type: 0 application, 1 SoftDevice, 2 bootloader, 3 SoftDevice and bootloader.
    public var firmwareType: UInt32?
    public var softDeviceSize: UInt32 = 0
    public var bootloaderSize: UInt32 = 0
    public var applicationSize: UInt32 = 0
    public var isSigned = false

    /// The image size the init packet announces (SoftDevice + bootloader + application).
    public var imageSize: UInt64 { UInt64(softDeviceSize) + UInt64(bootloaderSize) + UInt64(applicationSize) }

    /// Parses an init packet; nil when the bytes are not such a protobuf message or hold no init command.
    /// Never traps: every length is checked against what is left.
    public init?(_ bytes: [UInt8]) {
        var packet = ProtobufFields(bytes)
        var command: [UInt8]?
        while let field = packet.next() {
            switch (field.number, field.payload) {
            case (1, .bytes(let range)):
                command = Array(bytes[range])
            case (2, .bytes(let range)):
                var signed = ProtobufFields(Array(bytes[range]))
                while let inner = signed.next() {
                    if inner.number == 1, case .bytes(let commandRange) = inner.payload {
                        command = Array(signed.bytes[commandRange])
                        isSigned = true
                    }
                }
                guard signed.isValid else { return nil }
            default:
                break
            }
        }
        guard packet.isValid, let command else { return nil }
        var commandFields = ProtobufFields(command)
        var initBytes: [UInt8]?
        while let field = commandFields.next() {
            if field.number == 2, case .bytes(let range) = field.payload { initBytes = Array(command[range]) }
        }
        guard commandFields.isValid, let initBytes else { return nil }
        var initFields = ProtobufFields(initBytes)
        while let field = initFields.next() {
            guard case .varint(let value) = field.payload else { continue }
            let value32 = UInt32(truncatingIfNeeded: value)
            switch field.number {
            case 1: firmwareVersion = value32
            case 2: hardwareVersion = value32
            case 4: firmwareType = value32
            case 5: softDeviceSize = value32
            case 6: bootloaderSize = value32
            case 7: applicationSize = value32
            default: break
            }
        }
        guard initFields.isValid else { return nil }
    }
}

/// Walks the fields of one protobuf message; stops (and clears `isValid`) at the first malformed byte.
struct ProtobufFields {
    enum Payload {
        case varint(UInt64)
        case bytes(Range<Int>)
        case fixed
    }

    package let bytes: [UInt8]
    private var offset = 0
    private(set) var isValid = true

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package mutating func next() -> (number: UInt64, payload: Payload)? {
        guard isValid, offset < bytes.count else { return nil }
        guard let key = varint(), key >> 3 > 0 else { return invalid() }
        switch key & 7 {
        case 0:
            guard let value = varint() else { return invalid() }
            return (key >> 3, .varint(value))
        case 1, 5:
            let size = key & 7 == 1 ? 8 : 4
            guard bytes.count - offset >= size else { return invalid() }
            offset += size
            return (key >> 3, .fixed)
        case 2:
            guard let length = varint(), length <= UInt64(bytes.count - offset) else { return invalid() }
            let range = offset..<(offset + Int(length))
            offset = range.upperBound
            return (key >> 3, .bytes(range))
        default:
            return invalid()
        }
    }

    private mutating func invalid() -> (number: UInt64, payload: Payload)? {
        isValid = false
        return nil
    }

    private mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}
