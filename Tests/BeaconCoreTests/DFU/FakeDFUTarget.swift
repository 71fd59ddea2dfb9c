@testable import BeaconCore

/// A Secure DFU bootloader in miniature for the transfer tests: objects, receipts, checksums and execute as
/// the nRF5 SDK's bootloader keeps them, state that survives a dropped connection, and at the end a check of
/// the whole image's CRC-32 against the one it was told to expect (standing in for the init packet's hash).
struct FakeDFUTarget {
    var commandMaximumSize = 256
    var dataMaximumSize = 1_024
    var expectedImageCRC: UInt32
    var expectedImageSize: Int
    /// The installed firmware version; an init packet with a lower `fw_version` is refused at Execute.
    var installedVersion: UInt32 = 0

    var receiptInterval = 0
    var packetsSinceReceipt = 0
    var writing = SecureDFUProtocol.ObjectType.command
    var command: [UInt8] = []
    var commandSize = 0
    var commandExecuted = false
    var commandCreates = 0
    /// Every data byte received: executed objects, then the current object's bytes.
    var data: [UInt8] = []
    var executedOffset = 0
    var objectSize = 0
    var dataCreates = 0
    var packetsReceived = 0
    /// Packet numbers (1-based, counted over the target's life) whose first byte arrives flipped.
    var corruptPackets: Set<Int> = []
    var corruptEveryPacket = false
    /// Set when the last object was executed and the whole image's CRC matched.
    var imageAccepted = false

    init(image: [UInt8]) {
        expectedImageCRC = CRC32.checksum(image)
        expectedImageSize = image.count
    }

    mutating func controlPoint(_ bytes: [UInt8]) -> [[UInt8]] {
        guard let opcode = bytes.first else { return [] }
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
            commandExecuted = true
            return answer(.success)
        }
        guard commandExecuted else { return answer(.operationNotPermitted) }
        // Executing an executed object again is harmless; otherwise the object must be complete.
        let alreadyExecuted = data.count == executedOffset && data.count > 0
        guard alreadyExecuted || data.count == min(executedOffset + objectSize, expectedImageSize) else {
            return answer(.operationNotPermitted)
        }
        executedOffset = data.count
        if executedOffset == expectedImageSize {
            guard CRC32.checksum(data) == expectedImageCRC else { return answer(.extendedError(.hashFailed)) }
            imageAccepted = true
        }
        return answer(.success)
    }

    mutating func packet(_ bytes: [UInt8]) -> [[UInt8]] {
        packetsReceived += 1
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

/// What a scripted run of a transfer against a `FakeDFUTarget` produced.
struct DFURun {
    var progress: [DFUProgress] = []
    var outcome: SecureDFUAction?
    var controlPointWrites: [[UInt8]] = []
    /// Every packet written, init packet and image alike.
    var packets: [[UInt8]] = []
    var receipts = 0

    /// Runs `transfer` against `target` until it ends, or until `disconnectAfterPackets` packets were written.
    static func run(
        _ transfer: inout SecureDFUTransfer, _ target: inout FakeDFUTarget, disconnectAfterPackets: Int? = nil,
        start: Timestamp = 100
    ) -> DFURun {
        var run = DFURun()
        var now = start
        var pending = transfer.handle(.start(at: now))
        var inbox: [[UInt8]] = []
        while !pending.isEmpty || !inbox.isEmpty {
            if pending.isEmpty {
                now += 0.05
                pending = transfer.handle(.controlPoint(inbox.removeFirst(), at: now))
                continue
            }
            let action = pending.removeFirst()
            switch action {
            case .writeControlPoint(let bytes):
                run.controlPointWrites.append(bytes)
                inbox += target.controlPoint(bytes)
            case .writePacket(let bytes):
                run.packets.append(bytes)
                now += 0.01
                let receipts = target.packet(bytes)
                run.receipts += receipts.count
                inbox += receipts
                if let cut = disconnectAfterPackets, run.packets.count == cut {
                    pending = transfer.handle(.disconnected)
                    inbox = []
                }
            case .progress(let progress):
                run.progress.append(progress)
            case .completed, .failed:
                run.outcome = action
            }
        }
        return run
    }
}
