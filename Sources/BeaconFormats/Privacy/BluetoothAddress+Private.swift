import BeaconModel

/// The parts of a resolvable private address (Core specification Vol 6 Part B 1.3.2.2): the 24-bit `prand`
/// in the upper half (its two top bits 01) and the 24-bit `hash` in the lower half.
extension BluetoothAddress {
    /// True when the two most significant bits are 01: a resolvable private address, if the address type is
    /// random. Only these are candidates for resolution.
    public var isResolvablePrivate: Bool { (rawValue >> 46) & 0b11 == 0b01 }

    /// The upper 24 bits (prand, including the 01 marker bits).
    public var privatePrand: UInt32 { UInt32(truncatingIfNeeded: (rawValue >> 24) & 0xFF_FFFF) }

    /// The lower 24 bits (hash).
    public var privateHash: UInt32 { UInt32(truncatingIfNeeded: rawValue & 0xFF_FFFF) }

    /// A resolvable private address from `prand` (its top two bits are forced to 01) and `key`: what a device
    /// with that key would advertise. For tests, the simulator and the bench.
    public static func resolvablePrivate(
        prand: UInt32, key: IdentityResolvingKey,
        order: KeyByteOrder = .asWritten
    ) -> BluetoothAddress {
        let marked = (prand & 0x3F_FFFF) | 0x40_0000
        let hash = key.hash(prand: marked, order: order)
        return BluetoothAddress(rawValue: UInt64(marked) << 24 | UInt64(hash))
    }
}
