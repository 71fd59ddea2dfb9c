import BeaconModel

extension SecureDFUTransfer {
    package mutating func receive(_ bytes: [UInt8], now: Timestamp) -> [SecureDFUAction] {
        let response: SecureDFUResponse
        do throws(DecodeError) {
            response = try SecureDFUResponse.decode(bytes)
        } catch {
            return fail(.malformedResponse(step, reason: "\(error)"))
        }
        guard response.requestOpcode == awaitedOpcode else {
            return fail(
                .malformedResponse(
                    step, reason: "response to opcode \(response.requestOpcode), awaiting \(awaitedOpcode)"))
        }
        guard response.result == .success else { return fail(.target(step, response.result)) }
        let initPacket = package.initPacket
        switch phase {
        case .receiptsOffForInit:
            return request(SecureDFUProtocol.selectRequest(.command), .selectCommand, now: now)
        case .selectCommand:
            let maximum = Int(response.maximumSize)
            guard initPacket.count <= maximum else {
                return fail(
                    .invalidPackage(.selectCommand, [.initPacketTooLarge(size: initPacket.count, maximum: maximum)]))
            }
            if Int(response.offset) == initPacket.count, response.crc == CRC32.checksum(initPacket) {
                // The target holds this init packet already: execute it again rather than resend it.
                return request([SecureDFUProtocol.execute], .executeCommand, now: now)
            }
            return request(SecureDFUProtocol.createRequest(.command, size: initPacket.count), .createCommand, now: now)
        case .createCommand:
            var actions = packets(of: initPacket, from: 0, to: initPacket.count)
            actions += request([SecureDFUProtocol.calculateChecksum], .checksumCommand, now: now)
            return actions
        case .checksumCommand:
            let expected = CRC32.checksum(initPacket)
            if Int(response.offset) == initPacket.count, response.crc == expected {
                return request([SecureDFUProtocol.execute], .executeCommand, now: now)
            }
            retries += 1
            guard retries <= configuration.objectRetries else {
                return fail(
                    .checksumMismatch(
                        .sendInitPacket, expectedOffset: initPacket.count, offset: Int(response.offset),
                        expectedCRC: expected, crc: response.crc))
            }
            return request(SecureDFUProtocol.createRequest(.command, size: initPacket.count), .createCommand, now: now)
        case .executeCommand:
            retries = 0
            return request(
                SecureDFUProtocol.setReceiptNotificationRequest(configuration.receiptInterval), .receiptsForData,
                now: now)
        case .receiptsForData:
            return request(SecureDFUProtocol.selectRequest(.data), .selectData, now: now)
        case .selectData:
            return selected(response, now: now)
        case .createData:
            sent = objectStart
            packetsSinceReceipt = 0
            return sendPackets(now: now)
        case .awaitingReceipt:
            guard verify(response, offset: sent) else { return retryObject(response, expectedOffset: sent, now: now) }
            confirmed = sent
            packetsSinceReceipt = 0
            return [.progress(progress(now: now))] + sendPackets(now: now)
        case .checksumData:
            guard verify(response, offset: objectEnd) else {
                return retryObject(response, expectedOffset: objectEnd, now: now)
            }
            return request([SecureDFUProtocol.execute], .executeData, now: now)
        case .executeData:
            confirmed = objectEnd
            retries = 0
            guard objectEnd < package.firmware.count else {
                phase = .finished
                nextDeadline = nil
                return [.completed(progress(now: now))]
            }
            return [.progress(progress(now: now))] + createObject(at: objectEnd, now: now)
        case .idle, .finished, .failed:
            return []
        }
    }

    /// The data object's Select: resume from the target's offset when its CRC matches the image.
    private mutating func selected(_ response: SecureDFUResponse, now: Timestamp) -> [SecureDFUAction] {
        let maximum = Int(response.maximumSize)
        guard maximum > 0 else { return fail(.malformedResponse(.selectData, reason: "maximum object size 0")) }
        dataMaximumSize = maximum
        let total = package.firmware.count
        let offset = Int(response.offset)
        guard offset > 0, offset <= total else {
            // Nothing there, or more than this image: start at the beginning.
            return createObject(at: 0, now: now)
        }
        let partial = offset % maximum
        guard response.crc == imageCRC(upTo: offset) else {
            // The unexecuted object is not ours: create it again from the last object boundary before it.
            let start = partial == 0 ? offset - maximum : offset - partial
            confirmed = start
            startOffset = start
            return createObject(at: start, now: now)
        }
        confirmed = offset
        startOffset = offset
        if partial == 0 || offset == total {
            // A whole object is in but may not have been executed: execute it (again).
            objectStart = offset - (partial == 0 ? maximum : partial)
            objectEnd = offset
            return request([SecureDFUProtocol.execute], .executeData, now: now)
        }
        objectStart = offset - partial
        objectEnd = min(objectStart + maximum, total)
        sent = offset
        packetsSinceReceipt = 0
        return sendPackets(now: now)
    }

    private mutating func createObject(at start: Int, now: Timestamp) -> [SecureDFUAction] {
        objectStart = start
        objectEnd = min(start + dataMaximumSize, package.firmware.count)
        return request(SecureDFUProtocol.createRequest(.data, size: objectEnd - start), .createData, now: now)
    }

    /// Writes packets until a receipt is due or the object is written; then awaits the receipt or asks for the
    /// object's checksum.
    private mutating func sendPackets(now: Timestamp) -> [SecureDFUAction] {
        let interval = Int(configuration.receiptInterval)
        var actions: [SecureDFUAction] = []
        while sent < objectEnd, interval == 0 || packetsSinceReceipt < interval {
            let end = min(sent + configuration.packetSize, objectEnd)
            actions.append(.writePacket(Array(package.firmware[sent..<end])))
            sent = end
            packetsSinceReceipt += 1
        }
        if interval > 0, packetsSinceReceipt == interval {
            phase = .awaitingReceipt
            nextDeadline = now + configuration.responseTimeout
            return actions
        }
        return actions + request([SecureDFUProtocol.calculateChecksum], .checksumData, now: now)
    }

    private mutating func verify(_ response: SecureDFUResponse, offset: Int) -> Bool {
        Int(response.offset) == offset && response.crc == imageCRC(upTo: offset)
    }

    /// Sends the current object again from its start (the target discards an unexecuted object on Create).
    private mutating func retryObject(_ response: SecureDFUResponse, expectedOffset: Int, now: Timestamp)
        -> [SecureDFUAction]
    {
        retries += 1
        guard retries <= configuration.objectRetries else {
            return fail(
                .checksumMismatch(
                    step, expectedOffset: expectedOffset, offset: Int(response.offset),
                    expectedCRC: imageCRC(upTo: expectedOffset), crc: response.crc))
        }
        confirmed = objectStart
        return createObject(at: objectStart, now: now)
    }

    private func packets(of bytes: [UInt8], from start: Int, to end: Int) -> [SecureDFUAction] {
        stride(from: start, to: end, by: configuration.packetSize).map {
            .writePacket(Array(bytes[$0..<min($0 + configuration.packetSize, end)]))
        }
    }
}
