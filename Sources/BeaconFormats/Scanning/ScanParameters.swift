/// LE scan parameters in controller units, derived from `ScannerSettings`.
public struct ScanParameters: Sendable, Equatable {
    /// Active scanning sends scan requests and receives scan responses; passive only listens.
    public var active: Bool
    /// Scan interval in units of 0.625 ms.
    public var intervalUnits: UInt16
    /// Scan window in units of 0.625 ms (at most the interval).
    public var windowUnits: UInt16
    /// 0 public, 1 random.
    public var ownAddressType: UInt8
    /// 0 accept all advertising packets.
    public var filterPolicy: UInt8

    public init(
        active: Bool, intervalUnits: UInt16, windowUnits: UInt16, ownAddressType: UInt8 = 0,
        filterPolicy: UInt8 = 0
    ) {
        self.active = active
        self.intervalUnits = intervalUnits
        self.windowUnits = windowUnits
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    /// Legacy LE Set Scan Parameters accepts 0x0004...0x4000 (2.5 ms to 10.24 s).
    public static let legacyUnitRange: ClosedRange<UInt16> = 0x0004...0x4000
    /// LE Set Extended Scan Parameters accepts 0x0004...0xFFFF.
    public static let extendedUnitRange: ClosedRange<UInt16> = 0x0004...0xFFFF

    /// Converts milliseconds to 0.625 ms units (rounded to nearest), nil when out of the legacy range,
    /// which is the one every controller accepts.
    public static func units(milliseconds: Double) -> UInt16? {
        guard milliseconds.isFinite else { return nil }
        let units = (milliseconds / 0.625).rounded()
        guard units >= Double(legacyUnitRange.lowerBound), units <= Double(legacyUnitRange.upperBound) else {
            return nil
        }
        return UInt16(units)
    }
}
