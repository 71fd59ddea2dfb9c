import BeaconModel

extension GATTClient {
    /// Response opcodes: a PDU that fails to decode with one of these is charged to the outstanding request.
    private static let responseOpcodes: Set<UInt8> = [
        0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21,
    ]

    package mutating func receive(_ bytes: [UInt8], now: Timestamp) -> [GATTClientAction] {
        guard !isClosed else { return [] }
        let pdu: ATTPDU
        do throws(DecodeError) {
            guard bytes.count <= mtu else {
                throw DecodeError(offset: mtu, reason: "PDU of \(bytes.count) bytes exceeds ATT_MTU \(mtu)")
            }
            pdu = try ATTPDU.decode(bytes)
        } catch {
            if let current = outstanding, let opcode = bytes.first, Self.responseOpcodes.contains(opcode) {
                return finish(
                    current, .failure(.malformedResponse(current.procedure.step, reason: "\(error)")), now: now)
            }
            return [.failed(nil, .malformedResponse(.unsolicited, reason: "\(error)"))]
        }
        switch pdu {
        case .handleValueNotification(let handle, let value):
            return [.notification(handle: handle, value: value)]
        case .handleValueIndication(let handle, let value):
            return [.send(.handleValueConfirmation), .indication(handle: handle, value: value)]
        case .exchangeMTURequest(let clientMTU):
            // The peer is a client too: answer, and both sides use the smaller MTU.
            if clientMTU >= 23 { setMTU(min(preferredMTU, Int(clientMTU))) }
            return [.send(.exchangeMTUResponse(serverRxMTU: UInt16(preferredMTU)))]
        case .writeCommand, .handleValueConfirmation:
            return []
        case .other(let opcode, _) where Self.responseOpcodes.contains(opcode):
            // A response this client never asks for (Find By Type Value, Read Multiple, Prepare Write...).
            guard let current = outstanding else {
                return [
                    .failed(
                        nil, .malformedResponse(.unsolicited, reason: "opcode \(opcode) with no request outstanding"))
                ]
            }
            return respond(to: current, with: pdu, now: now)
        case .other(let opcode, _) where !ATTOpcode.isRequest(opcode):
            return []  // commands and unknown PDUs that expect no answer
        case .other, .findInformationRequest, .readByTypeRequest, .readRequest, .readBlobRequest,
            .readByGroupTypeRequest, .writeRequest:
            // This side has no GATT server.
            return [.send(.errorResponse(requestOpcode: pdu.opcode, handle: 0, code: .requestNotSupported))]
        default:
            guard let current = outstanding else {
                return [
                    .failed(
                        nil,
                        .malformedResponse(.unsolicited, reason: "opcode \(pdu.opcode) with no request outstanding"))
                ]
            }
            return respond(to: current, with: pdu, now: now)
        }
    }

    private mutating func respond(to current: Outstanding, with pdu: ATTPDU, now: Timestamp) -> [GATTClientAction] {
        let step = current.procedure.step
        if case .errorResponse(let requestOpcode, let handle, let code) = pdu {
            guard requestOpcode == current.requestOpcode else {
                let reason = "Error Response for opcode \(requestOpcode), request was \(current.requestOpcode)"
                return finish(current, .failure(.malformedResponse(step, reason: reason)), now: now)
            }
            return errorResponse(to: current, code: code, handle: handle, now: now)
        }
        do throws(GATTError) {
            switch (current.procedure, pdu) {
            case (.exchangeMTU, .exchangeMTUResponse(let serverMTU)):
                guard serverMTU >= 23 else {
                    throw .malformedResponse(step, reason: "server MTU \(serverMTU) is below 23")
                }
                setMTU(min(preferredMTU, Int(serverMTU)))
                return finish(current, .success(.mtu(mtu)), now: now)
            case (.discoverPrimaryServices, .readByGroupTypeResponse(let entries)):
                return try services(current, entries, now: now)
            case (.discoverCharacteristics(let service), .readByTypeResponse(let entries)):
                return try characteristics(current, entries, service: service, now: now)
            case (.discoverDescriptors(let characteristic), .findInformationResponse(let entries)):
                return try descriptors(current, entries, end: characteristic.endHandle, now: now)
            case (.read(let handle), .readResponse(let value)), (.read(let handle), .readBlobResponse(let value)):
                guard pdu.opcode == current.requestOpcode + 1 else { break }
                var next = current
                next.value += value
                guard next.value.count <= Self.maximumValueLength else {
                    throw .malformedResponse(step, reason: "value longer than \(Self.maximumValueLength) bytes")
                }
                // A full response means there may be more: continue with Read Blob at the next offset.
                if value.count == mtu - 1 {
                    let request = ATTPDU.readBlobRequest(handle: handle, offset: UInt16(next.value.count))
                    return continueWith(request, next, now: now)
                }
                return finish(current, .success(.value(next.value)), now: now)
            case (.write, .writeResponse), (.subscribe, .writeResponse):
                return finish(current, .success(.written), now: now)
            default:
                break
            }
            throw .malformedResponse(
                step, reason: "opcode \(pdu.opcode) does not answer request opcode \(current.requestOpcode)")
        } catch {
            return finish(current, .failure(error), now: now)
        }
    }

    private mutating func errorResponse(to current: Outstanding, code: ATTErrorCode, handle: UInt16, now: Timestamp)
        -> [GATTClientAction]
    {
        switch (current.procedure, code) {
        case (.discoverPrimaryServices, .attributeNotFound):
            return finish(current, .success(.services(current.services)), now: now)
        case (.discoverCharacteristics(let service), .attributeNotFound):
            return finish(current, .success(.characteristics(closing(current.characteristics, service))), now: now)
        case (.discoverDescriptors, .attributeNotFound):
            return finish(current, .success(.descriptors(current.descriptors)), now: now)
        case (.read, .attributeNotLong), (.read, .invalidOffset):
            // Read Blob past a value of exactly MTU - 1 bytes (or a multiple): the value is complete.
            if current.requestOpcode == ATTOpcode.readBlobRequest {
                return finish(current, .success(.value(current.value)), now: now)
            }
        default:
            break
        }
        return finish(current, .failure(.from(code, handle: handle, step: current.procedure.step)), now: now)
    }

    private mutating func services(_ current: Outstanding, _ entries: [ATTGroupValue], now: Timestamp) throws(GATTError)
        -> [GATTClientAction]
    {
        var next = current
        for entry in entries {
            guard entry.handle >= next.nextStart, entry.endGroupHandle >= entry.handle else {
                throw .malformedResponse(
                    .discoverServices,
                    reason: "service \(entry.handle)...\(entry.endGroupHandle) before handle \(next.nextStart)")
            }
            guard let uuid = GATTUUID(littleEndian: entry.value) else {
                throw .malformedResponse(.discoverServices, reason: "service UUID of \(entry.value.count) bytes")
            }
            next.services.append(GATTService(uuid: uuid, handle: entry.handle, endHandle: entry.endGroupHandle))
            if entry.endGroupHandle == 0xFFFF {
                return finish(current, .success(.services(next.services)), now: now)
            }
            next.nextStart = entry.endGroupHandle + 1
        }
        let request = ATTPDU.readByGroupTypeRequest(start: next.nextStart, end: 0xFFFF, type: .primaryService)
        return continueWith(request, next, now: now)
    }

    private mutating func characteristics(
        _ current: Outstanding, _ entries: [ATTHandleValue], service: GATTService, now: Timestamp
    ) throws(GATTError) -> [GATTClientAction] {
        var next = current
        for entry in entries {
            guard entry.handle >= next.nextStart, entry.handle <= service.endHandle else {
                throw .malformedResponse(
                    .discoverCharacteristics,
                    reason: "declaration at \(entry.handle) outside \(next.nextStart)...\(service.endHandle)")
            }
            let value = entry.value
            guard value.count == 5 || value.count == 19, let uuid = GATTUUID(littleEndian: value[3...]) else {
                throw .malformedResponse(
                    .discoverCharacteristics, reason: "declaration value of \(value.count) bytes")
            }
            let valueHandle = UInt16(value[1]) | UInt16(value[2]) << 8
            guard valueHandle > entry.handle, valueHandle <= service.endHandle else {
                throw .malformedResponse(
                    .discoverCharacteristics, reason: "value handle \(valueHandle) of declaration \(entry.handle)")
            }
            next.characteristics.append(
                GATTCharacteristic(
                    uuid: uuid, declarationHandle: entry.handle, valueHandle: valueHandle,
                    properties: GATTCharacteristicProperties(rawValue: value[0]), endHandle: service.endHandle))
            if entry.handle == service.endHandle {
                return finish(current, .success(.characteristics(closing(next.characteristics, service))), now: now)
            }
            next.nextStart = entry.handle + 1
        }
        let request = ATTPDU.readByTypeRequest(start: next.nextStart, end: service.endHandle, type: .characteristic)
        return continueWith(request, next, now: now)
    }

    private mutating func descriptors(
        _ current: Outstanding, _ entries: [ATTHandleType], end: UInt16, now: Timestamp
    ) throws(GATTError) -> [GATTClientAction] {
        var next = current
        for entry in entries {
            guard entry.handle >= next.nextStart, entry.handle <= end else {
                throw .malformedResponse(
                    .discoverDescriptors, reason: "descriptor at \(entry.handle) outside \(next.nextStart)...\(end)")
            }
            next.descriptors.append(GATTDescriptor(uuid: entry.type, handle: entry.handle))
            if entry.handle == end { return finish(current, .success(.descriptors(next.descriptors)), now: now) }
            next.nextStart = entry.handle + 1
        }
        return continueWith(.findInformationRequest(start: next.nextStart, end: end), next, now: now)
    }

    /// Each characteristic ends before the next declaration; the last one at the service's end.
    private func closing(_ found: [GATTCharacteristic], _ service: GATTService) -> [GATTCharacteristic] {
        var closed = found
        for index in closed.indices.dropLast() { closed[index].endHandle = closed[index + 1].declarationHandle - 1 }
        return closed
    }
}
