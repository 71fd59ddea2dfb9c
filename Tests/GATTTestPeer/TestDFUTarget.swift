import SecureDFU

/// A Secure DFU bootloader in miniature: objects, receipts, checksums and execute as the nRF5 SDK's bootloader
/// keeps them, state that survives a dropped connection, and at the end a check of the whole image against the
/// init packet's announced size and, when given, the CRC-32 it was told to expect (standing in for the init
/// packet's SHA-256, which this target does not compute). Used by the core's transfer tests, by `TestGATTServer`
/// (service 0xFE59) and so by `beaconbridge-testpeer --dfu` in the QEMU stage.
public struct TestDFUTarget: Sendable {
    public var commandMaximumSize = 256
    public var dataMaximumSize = 1_024
    /// The image's CRC-32 the target insists on; nil accepts any image of the announced size.
    public var expectedImageCRC: UInt32?
    /// The image size; nil: taken from the init packet at its Execute.
    public var expectedImageSize: Int?
    /// The installed firmware version; an init packet with a lower `fw_version` is refused at Execute.
    public var installedVersion: UInt32 = 0

    public var receiptInterval = 0
    public var packetsSinceReceipt = 0
    public var writing = SecureDFUProtocol.ObjectType.command
    public var command: [UInt8] = []
    public var commandSize = 0
    public var commandExecuted = false
    public var commandCreates = 0
    /// Every data byte received: executed objects, then the current object's bytes.
    public var data: [UInt8] = []
    public var executedOffset = 0
    public var objectSize = 0
    public var dataCreates = 0
    public var packetsReceived = 0
    /// Packet numbers (1-based, counted over the target's life) whose first byte arrives flipped.
    public var corruptPackets: Set<Int> = []
    public var corruptEveryPacket = false
    /// Set when the last object was executed and the whole image's CRC matched.
    public var imageAccepted = false

    /// Data bytes received over the target's life (packets of data objects, resent ones included).
    public var dataBytesReceived = 0
    /// The CRC-32 of the accepted image.
    public var acceptedCRC: UInt32?
    /// The image size the executed init packet announced (when `expectedImageSize` is nil).
    public var announcedSize: Int?

    public init(image: [UInt8]) {
        expectedImageCRC = CRC32.checksum(image)
        expectedImageSize = image.count
    }

    /// A target that learns the image size from the init packet and checks the CRC-32 when given one.
    public init(expectedCRC: UInt32?) {
        expectedImageCRC = expectedCRC
    }

    /// The responses to one control point write (at most one).
    public mutating func controlPoint(_ bytes: [UInt8]) -> [[UInt8]] {
        guard let opcode = bytes.first else { return [] }
        // A Create of 6 bytes, a Select or Set PRN of 2 or 3: anything longer is not a request of this protocol.
        guard bytes.count <= 6 else {
            return [SecureDFUResponse(requestOpcode: opcode, result: .invalidParameter).encode()]
        }
        func answer(_ result: SecureDFUResultCode, maximum: Int = 0, of object: [UInt8]? = nil) -> [[UInt8]] {
            var response = SecureDFUResponse(requestOpcode: opcode, result: result)
            response.maximumSize = UInt32(maximum)
            if let object {
                response.offset = UInt32(object.count)
                response.crc = CRC32.checksum(object)
            }
            return [response.encode()]
        }
        let type = bytes.count > 1 ? SecureDFUProtocol.ObjectType(rawValue: bytes[1]) : nil
        switch opcode {
        case SecureDFUProtocol.setReceiptNotification:
            guard bytes.count == 3 else { return answer(.invalidParameter) }
            receiptInterval = Int(bytes[1]) | Int(bytes[2]) << 8
            packetsSinceReceipt = 0
            return answer(.success)
        case SecureDFUProtocol.select:
            guard let type else { return answer(.unsupportedType) }
            writing = type
            packetsSinceReceipt = 0
            return type == .command
                ? answer(.success, maximum: commandMaximumSize, of: command)
                : answer(.success, maximum: dataMaximumSize, of: data)
        case SecureDFUProtocol.create:
            guard let type, bytes.count == 6 else { return answer(.invalidParameter) }
            let size = Int(bytes[2]) | Int(bytes[3]) << 8 | Int(bytes[4]) << 16 | Int(bytes[5]) << 24
            writing = type
            packetsSinceReceipt = 0
            if type == .command {
                guard size <= commandMaximumSize else { return answer(.insufficientResources) }
                commandCreates += 1
                command = []
                commandSize = size
                commandExecuted = false
                // A new init command starts the image over.
                data = []
                executedOffset = 0
                announcedSize = nil
                imageAccepted = false
                acceptedCRC = nil
            } else {
                guard commandExecuted else { return answer(.operationNotPermitted) }
                guard size <= dataMaximumSize, size > 0 else { return answer(.insufficientResources) }
                dataCreates += 1
                data = Array(data[0..<executedOffset])
                objectSize = size
            }
            return answer(.success)
        case SecureDFUProtocol.calculateChecksum:
            return answer(.success, of: writing == .command ? command : data)
        case SecureDFUProtocol.execute:
            return execute()
        default:
            return answer(.opcodeNotSupported)
        }
    }

    private mutating func execute() -> [[UInt8]] {
        func answer(_ result: SecureDFUResultCode) -> [[UInt8]] {
            [SecureDFUResponse(requestOpcode: SecureDFUProtocol.execute, result: result).encode()]
        }
        if writing == .command {
            guard command.count == commandSize, commandSize > 0 else { return answer(.operationNotPermitted) }
            guard let parsed = DFUInitCommand(command) else { return answer(.extendedError(.initCommandInvalid)) }
            if let version = parsed.firmwareVersion, version < installedVersion {
                return answer(.extendedError(.firmwareVersionFailure))
            }
            if expectedImageSize == nil {
                guard parsed.imageSize > 0, parsed.imageSize <= 4 << 20 else {
                    return answer(.extendedError(.initCommandInvalid))
                }
                announcedSize = Int(parsed.imageSize)
            }
            commandExecuted = true
            return answer(.success)
        }
        guard commandExecuted, let expectedImageSize = expectedImageSize ?? announcedSize else {
            return answer(.operationNotPermitted)
        }
        // Executing an executed object again is harmless; otherwise the object must be complete.
        let alreadyExecuted = data.count == executedOffset && data.count > 0
        guard alreadyExecuted || data.count == min(executedOffset + objectSize, expectedImageSize) else {
            return answer(.operationNotPermitted)
        }
        executedOffset = data.count
        if executedOffset == expectedImageSize {
            let crc = CRC32.checksum(data)
            guard expectedImageCRC.map({ $0 == crc }) ?? true else { return answer(.extendedError(.hashFailed)) }
            imageAccepted = true
            acceptedCRC = crc
        }
        return answer(.success)
    }

    /// The receipt a packet write causes, if one is due.
    public mutating func packet(_ bytes: [UInt8]) -> [[UInt8]] {
        packetsReceived += 1
        // Bytes past the object's size are dropped (a real bootloader would fail the object).
        let room = writing == .command ? commandSize - command.count : executedOffset + objectSize - data.count
        guard bytes.count <= room else { return [] }
        if writing == .data { dataBytesReceived += bytes.count }
        var bytes = bytes
        if corruptEveryPacket || corruptPackets.remove(packetsReceived) != nil, !bytes.isEmpty { bytes[0] ^= 0xFF }
        if writing == .command { command += bytes } else { data += bytes }
        packetsSinceReceipt += 1
        guard receiptInterval > 0, packetsSinceReceipt == receiptInterval else { return [] }
        packetsSinceReceipt = 0
        let object = writing == .command ? command : data
        var receipt = SecureDFUResponse(requestOpcode: SecureDFUProtocol.calculateChecksum, result: .success)
        receipt.offset = UInt32(object.count)
        receipt.crc = CRC32.checksum(object)
        return [receipt.encode()]
    }
}
