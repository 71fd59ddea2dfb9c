/// The AD structures of one advertising report, parsed without copying: accessors read `bytes` on demand.
///
/// Parsing stops cleanly at a zero length byte (the rest is padding) or at a length that runs past the end
/// (`overrunOffset` then says where); the structures before that point are kept.
public struct AdvertisingData: Sendable, Equatable {
    public static let flags: UInt8 = 0x01
    public static let incompleteUUID16: UInt8 = 0x02, completeUUID16: UInt8 = 0x03
    public static let incompleteUUID32: UInt8 = 0x04, completeUUID32: UInt8 = 0x05
    public static let incompleteUUID128: UInt8 = 0x06, completeUUID128: UInt8 = 0x07
    public static let shortName: UInt8 = 0x08, completeName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceData16: UInt8 = 0x16, serviceData32: UInt8 = 0x20, serviceData128: UInt8 = 0x21
    public static let manufacturerSpecific: UInt8 = 0xFF

    public let bytes: [UInt8]
    /// End of the well-formed structures (== bytes.count unless parsing stopped early).
    public let parsedEnd: Int
    /// Offset of a length byte that ran past the end of the data; nil when the data was well formed.
    public let overrunOffset: Int?

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var offset = 0
        var overrun: Int?
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            if offset + 1 + length > bytes.count {
                overrun = offset
                break
            }
            offset += 1 + length
        }
        parsedEnd = offset
        overrunOffset = overrun
    }

    /// The well-formed AD structures in order.
    public var structures: Structures { Structures(bytes: bytes, end: parsedEnd) }

    public struct Structures: Sequence, Sendable {
        package let bytes: [UInt8]
        package let end: Int

        public struct Iterator: IteratorProtocol, Sendable {
            package let bytes: [UInt8]
            package let end: Int
            package var offset: Int

            @inline(__always)
            public mutating func next() -> ADStructure? {
                guard offset + 1 < end else { return nil }
                let length = Int(bytes[offset])
                guard length > 0, offset + 1 + length <= end else { return nil }
                let structure = ADStructure(type: bytes[offset + 1], range: (offset + 2)..<(offset + 1 + length))
                offset += 1 + length
                return structure
            }
        }

        public func makeIterator() -> Iterator { Iterator(bytes: bytes, end: end, offset: 0) }
    }

    /// The first structure of `type`.
    public func first(_ type: UInt8) -> ADStructure? { structures.first { $0.type == type } }

    public var flags: UInt8? {
        guard let structure = first(Self.flags), !structure.range.isEmpty else { return nil }
        return bytes[structure.range.lowerBound]
    }

    /// TX power level (AD 0x0A) in dBm.
    public var txPowerLevel: Int8? {
        guard let structure = first(Self.txPowerLevel), !structure.range.isEmpty else { return nil }
        return Int8(bitPattern: bytes[structure.range.lowerBound])
    }

    public var shortenedLocalName: String? { name(Self.shortName) }
    public var completeLocalName: String? { name(Self.completeName) }
    /// The complete local name, else the shortened one.
    public var localName: String? { completeLocalName ?? shortenedLocalName }

    private func name(_ type: UInt8) -> String? {
        guard let structure = first(type) else { return nil }
        var range = structure.range
        while let last = range.last, bytes[last] == 0 { range = range.lowerBound..<last }
        return String(decoding: bytes[range], as: UTF8.self)
    }

    /// Service UUIDs of the complete and incomplete 16, 32 and 128-bit lists, in order of appearance.
    /// A list whose length is not a multiple of the UUID size keeps its whole UUIDs.
    public var serviceUUIDs: [ServiceUUID] {
        var out: [ServiceUUID] = []
        for structure in structures {
            let size: Int
            switch structure.type {
            case Self.incompleteUUID16, Self.completeUUID16: size = 2
            case Self.incompleteUUID32, Self.completeUUID32: size = 4
            case Self.incompleteUUID128, Self.completeUUID128: size = 16
            default: continue
            }
            var start = structure.range.lowerBound
            while start + size <= structure.range.upperBound {
                if let uuid = ServiceUUID(littleEndian: bytes, start..<(start + size)) { out.append(uuid) }
                start += size
            }
        }
        return out
    }

    /// Service data structures with a complete service UUID.
    public var serviceData: [ServiceData] {
        structures.compactMap { serviceData(of: $0) }
    }

    /// The service data in one structure, nil if it is not service data or too short for its UUID.
    public func serviceData(of structure: ADStructure) -> ServiceData? {
        let size: Int
        switch structure.type {
        case Self.serviceData16: size = 2
        case Self.serviceData32: size = 4
        case Self.serviceData128: size = 16
        default: return nil
        }
        guard structure.range.count >= size,
            let uuid = ServiceUUID(
                littleEndian: bytes, structure.range.lowerBound..<(structure.range.lowerBound + size))
        else { return nil }
        return ServiceData(uuid: uuid, range: structure.range)
    }

    /// Manufacturer specific data structures with at least a company code.
    public var manufacturerData: [ManufacturerData] {
        structures.compactMap { structure in
            guard structure.type == Self.manufacturerSpecific, structure.range.count >= 2 else { return nil }
            let start = structure.range.lowerBound
            return ManufacturerData(
                companyID: UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8, range: structure.range)
        }
    }
}
