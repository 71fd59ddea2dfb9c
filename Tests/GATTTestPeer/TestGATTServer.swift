import BeaconModel
import DeviceProtocols
import SecureDFU

/// The GATT database and ATT server of the test peripheral: Device Information (Firmware Revision String),
/// Battery Service (Battery Level, notifiable) and a custom service whose writable characteristic notifies its
/// new value once notifications are on; with a `TestDFUTarget`, also Nordic's Secure DFU service (0xFE59: control
/// point and packet, see `TestGATTServer+DFU`). Pure: a request in, the PDUs to send out. Test-only: used by
/// `beaconbridge-testpeer` (the QEMU stage's peripheral) and by `GATTLinkTests` over a socket pair.
public struct TestGATTServer {
    /// The custom service and its characteristic (any 128-bit UUIDs off the Bluetooth Base UUID).
    public static let customService = GATTUUID("6e4a0001-8f7b-4c8e-9d15-3b1e2c0a7f10")!
    public static let customCharacteristic = GATTUUID("6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10")!

    public struct Attribute: Sendable {
        public var handle: UInt16
        public var type: GATTUUID
        public var value: [UInt8]
        public var writable = false
    }

    public var attributes: [Attribute] = []
    public var mtu = 23
    /// Handles of the CCCDs and the value each guards.
    private var cccdOf: [UInt16: UInt16] = [:]
    /// What happened, for the peripheral's log.
    public var log: [String] = []
    /// The Secure DFU target behind service 0xFE59, when the server has one (its state is the caller's to keep
    /// across connections, so a transfer can resume).
    public var dfuTarget: TestDFUTarget?
    var dfuControlPoint: UInt16 = 0
    var dfuPacket: UInt16 = 0

    public init(firmware: String, battery: UInt8, dfuTarget: TestDFUTarget? = nil) {
        var next: UInt16 = 1
        func add(_ type: GATTUUID, _ value: [UInt8], writable: Bool = false) -> UInt16 {
            attributes.append(Attribute(handle: next, type: type, value: value, writable: writable))
            next += 1
            return next - 1
        }
        func service(_ uuid: GATTUUID) { _ = add(.primaryService, uuid.littleEndianBytes) }
        func characteristic(_ uuid: GATTUUID, _ properties: UInt8, _ value: [UInt8], notify: Bool, writable: Bool) {
            let valueHandle = next + 1
            let declaration = [properties, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)] + uuid.littleEndianBytes
            _ = add(.characteristic, declaration)
            _ = add(uuid, value, writable: writable)
            if notify { cccdOf[add(.clientCharacteristicConfiguration, [0, 0], writable: true)] = valueHandle }
        }
        service(.uuid16(0x180A))
        characteristic(.uuid16(0x2A26), 0x02, Array(firmware.utf8), notify: false, writable: false)
        service(.uuid16(0x180F))
        characteristic(.uuid16(0x2A19), 0x12, [battery], notify: true, writable: false)
        service(Self.customService)
        characteristic(Self.customCharacteristic, 0x1E, [0], notify: true, writable: true)
        if let dfuTarget {
            self.dfuTarget = dfuTarget
            service(SecureDFUProtocol.service)
            dfuControlPoint = next + 1
            characteristic(SecureDFUProtocol.controlPoint, 0x18, [], notify: true, writable: true)
            dfuPacket = next + 1
            characteristic(SecureDFUProtocol.packet, 0x04, [], notify: false, writable: true)
        }
    }

    /// Whether notifications of the value at `handle` are on.
    func isSubscribed(_ handle: UInt16) -> Bool {
        cccdOf.contains { cccd, guarded in
            guarded == handle && attributes.first(where: { $0.handle == cccd })?.value.first.map { $0 & 1 != 0 } == true
        }
    }

    /// The PDUs answering one received PDU (a response, or a write's response followed by notifications).
    public mutating func handle(_ bytes: [UInt8]) -> [ATTPDU] {
        let pdu: ATTPDU
        do { pdu = try ATTPDU.decode(bytes) } catch {
            guard let opcode = bytes.first, ATTOpcode.isRequest(opcode) else { return [] }
            return [.errorResponse(requestOpcode: opcode, handle: 0, code: .invalidPDU)]
        }
        func error(_ handle: UInt16, _ code: ATTErrorCode) -> [ATTPDU] {
            [.errorResponse(requestOpcode: pdu.opcode, handle: handle, code: code)]
        }
        switch pdu {
        case .exchangeMTURequest(let clientMTU):
            mtu = max(23, min(247, Int(clientMTU)))
            return [.exchangeMTUResponse(serverRxMTU: 247)]
        case .readByGroupTypeRequest(let start, let end, let type):
            guard start != 0, start <= end else { return error(start, .invalidHandle) }
            guard type == .primaryService else { return error(start, .unsupportedGroupType) }
            var entries: [ATTGroupValue] = []
            let services = attributes.filter { $0.type == .primaryService }
            for (index, service) in services.enumerated() where (start...end).contains(service.handle) {
                let groupEnd = index + 1 < services.count ? services[index + 1].handle - 1 : 0xFFFF
                let entry = ATTGroupValue(handle: service.handle, endGroupHandle: groupEnd, value: service.value)
                guard entries.first.map({ $0.value.count == entry.value.count }) ?? true,
                    2 + (entries.count + 1) * (4 + entry.value.count) <= mtu
                else { break }
                entries.append(entry)
            }
            return entries.isEmpty ? error(start, .attributeNotFound) : [.readByGroupTypeResponse(entries)]
        case .readByTypeRequest(let start, let end, let type):
            guard start != 0, start <= end else { return error(start, .invalidHandle) }
            var entries: [ATTHandleValue] = []
            for attribute in attributes where (start...end).contains(attribute.handle) && attribute.type == type {
                let entry = ATTHandleValue(handle: attribute.handle, value: Array(attribute.value.prefix(mtu - 4)))
                guard entries.first.map({ $0.value.count == entry.value.count }) ?? true,
                    2 + (entries.count + 1) * (2 + entry.value.count) <= mtu
                else { break }
                entries.append(entry)
            }
            return entries.isEmpty ? error(start, .attributeNotFound) : [.readByTypeResponse(entries)]
        case .findInformationRequest(let start, let end):
            guard start != 0, start <= end else { return error(start, .invalidHandle) }
            var entries: [ATTHandleType] = []
            for attribute in attributes where (start...end).contains(attribute.handle) {
                let entry = ATTHandleType(handle: attribute.handle, type: attribute.type)
                let size = entry.type.littleEndianBytes.count
                guard entries.first.map({ $0.type.littleEndianBytes.count == size }) ?? true,
                    2 + (entries.count + 1) * (2 + size) <= mtu
                else { break }
                entries.append(entry)
            }
            return entries.isEmpty ? error(start, .attributeNotFound) : [.findInformationResponse(entries)]
        case .readRequest(let handle):
            guard let attribute = attributes.first(where: { $0.handle == handle }) else {
                return error(handle, .invalidHandle)
            }
            return [.readResponse(value: Array(attribute.value.prefix(mtu - 1)))]
        case .readBlobRequest(let handle, let offset):
            guard let attribute = attributes.first(where: { $0.handle == handle }) else {
                return error(handle, .invalidHandle)
            }
            guard Int(offset) <= attribute.value.count else { return error(handle, .invalidOffset) }
            return [.readBlobResponse(value: Array(attribute.value.dropFirst(Int(offset)).prefix(mtu - 1)))]
        case .writeRequest(let handle, let value):
            return write(handle, value, respond: true, error: error)
        case .writeCommand(let handle, let value):
            return write(handle, value, respond: false, error: error).filter { $0.opcode != ATTOpcode.errorResponse }
        case .handleValueConfirmation, .exchangeMTUResponse, .handleValueNotification:
            return []
        default:
            return ATTOpcode.isRequest(pdu.opcode) ? error(0, .requestNotSupported) : []
        }
    }

    private mutating func write(
        _ handle: UInt16, _ value: [UInt8], respond: Bool, error: (UInt16, ATTErrorCode) -> [ATTPDU]
    ) -> [ATTPDU] {
        guard let index = attributes.firstIndex(where: { $0.handle == handle }) else {
            return error(handle, .invalidHandle)
        }
        guard attributes[index].writable else { return error(handle, .writeNotPermitted) }
        if cccdOf[handle] != nil {
            guard value.count == 2 else { return error(handle, .invalidAttributeValueLength) }
            attributes[index].value = value
            log.append("cccd \(handle) \(HexText.hex(value))")
            return respond ? [.writeResponse] : []
        }
        if dfuTarget != nil, handle == dfuControlPoint || handle == dfuPacket {
            return dfuWrite(handle, value, respond: respond)
        }
        guard value.count <= 64 else { return error(handle, .invalidAttributeValueLength) }
        attributes[index].value = value
        log.append("write \(attributes[index].type) \(HexText.hex(value))")
        var out: [ATTPDU] = respond ? [.writeResponse] : []
        if isSubscribed(handle) {
            out.append(.handleValueNotification(handle: handle, value: Array(value.prefix(mtu - 3))))
            log.append("notify \(attributes[index].type) \(HexText.hex(value))")
        }
        return out
    }
}
