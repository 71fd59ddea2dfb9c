/// One AD structure: its type and the index range of its payload (after the type byte) in the data.
public struct ADStructure: Sendable, Equatable {
    public var type: UInt8
    public var range: Range<Int>
}

/// Manufacturer specific data (AD 0xFF). `range` covers the whole payload, company code included.
public struct ManufacturerData: Sendable, Equatable {
    public var companyID: UInt16
    public var range: Range<Int>
}

/// Service data (AD 0x16 / 0x20 / 0x21). `range` covers the whole payload, service UUID included.
public struct ServiceData: Sendable, Equatable {
    public var uuid: ServiceUUID
    public var range: Range<Int>
}
