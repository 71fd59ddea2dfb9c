import BeaconModel

extension ATTPDU {
    /// Decodes one PDU (the whole L2CAP payload of the ATT channel). Throws on truncation, trailing bytes after
    /// fixed-size PDUs, unknown list formats and lists whose length does not divide; never traps.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> ATTPDU {
        var cursor = ByteCursor(bytes)
        let opcode = try cursor.readUInt8("opcode")
        let pdu: ATTPDU
        switch opcode {
        case ATTOpcode.errorResponse:
            let request = try cursor.readUInt8("request opcode in error")
            let handle = try cursor.readUInt16LE("handle in error")
            let code = ATTErrorCode(rawValue: try cursor.readUInt8("error code"))
            pdu = .errorResponse(requestOpcode: request, handle: handle, code: code)
        case ATTOpcode.exchangeMTURequest:
            pdu = .exchangeMTURequest(clientRxMTU: try cursor.readUInt16LE("client rx MTU"))
        case ATTOpcode.exchangeMTUResponse:
            pdu = .exchangeMTUResponse(serverRxMTU: try cursor.readUInt16LE("server rx MTU"))
        case ATTOpcode.findInformationRequest:
            let (start, end) = try readRange(&cursor)
            pdu = .findInformationRequest(start: start, end: end)
        case ATTOpcode.findInformationResponse:
            pdu = .findInformationResponse(try readInformation(&cursor))
        case ATTOpcode.readByTypeRequest, ATTOpcode.readByGroupTypeRequest:
            let (start, end) = try readRange(&cursor)
            let at = cursor.offset
            guard let type = GATTUUID(littleEndian: try cursor.readBytes(cursor.remaining, "attribute type")) else {
                throw DecodeError(offset: at, reason: "attribute type is neither 2 nor 16 bytes")
            }
            pdu =
                opcode == ATTOpcode.readByTypeRequest
                ? .readByTypeRequest(start: start, end: end, type: type)
                : .readByGroupTypeRequest(start: start, end: end, type: type)
        case ATTOpcode.readByTypeResponse:
            let entries = try readList(&cursor, minimumLength: 2)
            pdu = .readByTypeResponse(
                entries.map { ATTHandleValue(handle: UInt16($0[0]) | UInt16($0[1]) << 8, value: Array($0[2...])) })
        case ATTOpcode.readByGroupTypeResponse:
            let entries = try readList(&cursor, minimumLength: 4)
            pdu = .readByGroupTypeResponse(
                entries.map {
                    ATTGroupValue(
                        handle: UInt16($0[0]) | UInt16($0[1]) << 8, endGroupHandle: UInt16($0[2]) | UInt16($0[3]) << 8,
                        value: Array($0[4...]))
                })
        case ATTOpcode.readRequest:
            pdu = .readRequest(handle: try cursor.readUInt16LE("handle"))
        case ATTOpcode.readResponse:
            pdu = .readResponse(value: try cursor.readBytes(cursor.remaining))
        case ATTOpcode.readBlobRequest:
            let handle = try cursor.readUInt16LE("handle")
            pdu = .readBlobRequest(handle: handle, offset: try cursor.readUInt16LE("value offset"))
        case ATTOpcode.readBlobResponse:
            pdu = .readBlobResponse(value: try cursor.readBytes(cursor.remaining))
        case ATTOpcode.writeRequest, ATTOpcode.writeCommand, ATTOpcode.handleValueNotification,
            ATTOpcode.handleValueIndication:
            let handle = try cursor.readUInt16LE("handle")
            let value = try cursor.readBytes(cursor.remaining)
            switch opcode {
            case ATTOpcode.writeRequest: pdu = .writeRequest(handle: handle, value: value)
            case ATTOpcode.writeCommand: pdu = .writeCommand(handle: handle, value: value)
            case ATTOpcode.handleValueNotification: pdu = .handleValueNotification(handle: handle, value: value)
            default: pdu = .handleValueIndication(handle: handle, value: value)
            }
        case ATTOpcode.writeResponse:
            pdu = .writeResponse
        case ATTOpcode.handleValueConfirmation:
            pdu = .handleValueConfirmation
        default:
            return .other(opcode: opcode, parameters: try cursor.readBytes(cursor.remaining))
        }
        guard cursor.isAtEnd else {
            throw DecodeError(offset: cursor.offset, reason: "\(cursor.remaining) byte(s) after the PDU")
        }
        return pdu
    }

    /// The bytes on the wire.
    public func encode() -> [UInt8] {
        var out: [UInt8] = [opcode]
        func put16(_ value: UInt16) {
            out.append(UInt8(truncatingIfNeeded: value))
            out.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        switch self {
        case .errorResponse(let request, let handle, let code):
            out.append(request)
            put16(handle)
            out.append(code.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            put16(mtu)
        case .findInformationRequest(let start, let end):
            put16(start)
            put16(end)
        case .findInformationResponse(let entries):
            let wide = entries.contains { if case .uuid128 = $0.type { true } else { false } }
            out.append(wide ? 0x02 : 0x01)
            for entry in entries {
                put16(entry.handle)
                // A list mixing sizes cannot be encoded as such; 16-bit types are widened in a 128-bit list.
                if wide, case .uuid16 = entry.type {
                    let (high, low) = entry.type.full
                    out += GATTUUID.uuid128(high: high, low: low).littleEndianBytes
                } else {
                    out += entry.type.littleEndianBytes
                }
            }
        case .readByTypeRequest(let start, let end, let type), .readByGroupTypeRequest(let start, let end, let type):
            put16(start)
            put16(end)
            out += type.littleEndianBytes
        case .readByTypeResponse(let entries):
            out.append(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                put16(entry.handle)
                out += entry.value
            }
        case .readByGroupTypeResponse(let entries):
            out.append(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                put16(entry.handle)
                put16(entry.endGroupHandle)
                out += entry.value
            }
        case .readRequest(let handle):
            put16(handle)
        case .readResponse(let value), .readBlobResponse(let value):
            out += value
        case .readBlobRequest(let handle, let offset):
            put16(handle)
            put16(offset)
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
            .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            put16(handle)
            out += value
        case .writeResponse, .handleValueConfirmation:
            break
        case .other(_, let parameters):
            out += parameters
        }
        return out
    }

    private static func readRange(_ cursor: inout ByteCursor) throws(DecodeError) -> (UInt16, UInt16) {
        let start = try cursor.readUInt16LE("starting handle")
        return (start, try cursor.readUInt16LE("ending handle"))
    }

    private static func readInformation(_ cursor: inout ByteCursor) throws(DecodeError) -> [ATTHandleType] {
        let formatAt = cursor.offset
        let format = try cursor.readUInt8("format")
        let size: Int
        switch format {
        case 0x01: size = 2
        case 0x02: size = 16
        default: throw DecodeError(offset: formatAt, reason: "unknown Find Information format \(format)")
        }
        guard cursor.remaining > 0, cursor.remaining % (2 + size) == 0 else {
            throw DecodeError(
                offset: cursor.offset,
                reason: "\(cursor.remaining) byte(s) of information data, entries are \(2 + size)")
        }
        var entries: [ATTHandleType] = []
        while !cursor.isAtEnd {
            let handle = try cursor.readUInt16LE("handle")
            let at = cursor.offset
            guard let type = GATTUUID(littleEndian: try cursor.readBytes(size, "attribute type")) else {
                throw DecodeError(offset: at, reason: "attribute type")
            }
            entries.append(ATTHandleType(handle: handle, type: type))
        }
        return entries
    }

    /// A length-prefixed list of equal-size entries (Read By Type / Read By Group Type responses).
    private static func readList(_ cursor: inout ByteCursor, minimumLength: Int) throws(DecodeError) -> [[UInt8]] {
        let lengthAt = cursor.offset
        let length = Int(try cursor.readUInt8("entry length"))
        guard length >= minimumLength else {
            throw DecodeError(offset: lengthAt, reason: "entry length \(length) is below \(minimumLength)")
        }
        guard cursor.remaining > 0, cursor.remaining % length == 0 else {
            throw DecodeError(
                offset: cursor.offset, reason: "\(cursor.remaining) byte(s) of entries, each is \(length)")
        }
        var entries: [[UInt8]] = []
        while !cursor.isAtEnd { entries.append(try cursor.readBytes(length, "entry")) }
        return entries
    }
}
