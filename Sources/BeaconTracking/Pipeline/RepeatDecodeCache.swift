import BeaconModel

/// Remembers what the decoder made of recent advertisements, so a report whose bytes repeat the last ones the same
/// device sent (an iBeacon, AltBeacon or Eddystone-UID sends the same bytes every time) skips parsing, format
/// matching and the rendering of its id and identifiers: about a third of the pipeline's cost per report.
///
/// Sound because decoding is a pure function of (advertising data, address, address type) for a fixed decoder: the
/// key holds all three, the report's own time and RSSI are put back on a hit, and the pipeline clears the cache
/// whenever its decoder changes (reload). What depends on earlier reports stays outside: name merging and the
/// encrypted-counter guard run on every report, hit or miss (a repeated encrypted frame is still a replay).
///
/// Bounded: two generations of at most `capacity` entries each. Lookups go to the current generation, then to the
/// previous one (an entry found there moves to the current); when the current one is full it becomes the previous
/// one and the oldest generation is dropped, so a device that keeps sending the same bytes stays cached while
/// advertisements that change every time (rotating payloads, counters) pass through without evicting it for long.
struct RepeatDecodeCache: Sendable {
    package struct Key: Equatable, Sendable {
        /// A 64-bit mix of the other three, made once per report: the cache's tables are probed by this word alone
        /// (no `Hasher`: SipHash of the address, the type and some 30 data bytes, then of the fingerprint, was
        /// about 5 % of the live path, issue 45) and equality compares it first. Seeded per process, so bytes
        /// chosen to collide cannot be prepared in advance; a collision costs only a comparison of the data
        /// (equality still compares everything).
        package let fingerprint: UInt64
        package let data: [UInt8]
        package let address: BluetoothAddress
        package let addressType: AddressType

        package init(data: [UInt8], address: BluetoothAddress, addressType: AddressType) {
            self.data = data
            self.address = address
            self.addressType = addressType
            fingerprint = Self.fingerprint(data, address: address, addressType: addressType)
        }

        /// A key with a chosen fingerprint, for tests of colliding fingerprints.
        init(data: [UInt8], address: BluetoothAddress, addressType: AddressType, fingerprint: UInt64) {
            self.data = data
            self.address = address
            self.addressType = addressType
            self.fingerprint = fingerprint
        }

        /// The fingerprint, then the address and type, then the data (eight bytes at a time).
        package static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.fingerprint == rhs.fingerprint, lhs.address == rhs.address,
                lhs.addressType == rhs.addressType, lhs.data.count == rhs.data.count
            else { return false }
            return lhs.data.withUnsafeBytes { left in
                rhs.data.withUnsafeBytes { right in
                    var offset = 0
                    while offset + 8 <= left.count {
                        guard
                            left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                                == right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                        else { return false }
                        offset += 8
                    }
                    while offset < left.count {
                        guard left[offset] == right[offset] else { return false }
                        offset += 1
                    }
                    return true
                }
            }
        }

        /// This process's seed of the fingerprints (random, as `Hasher`'s own seed is).
        static let seed = UInt64.random(in: .min ... .max)

        /// The data eight bytes at a time through a multiply-xorshift (MurmurHash3's `fmix64` constants), after
        /// the seed, address, type and length.
        static func fingerprint(_ data: [UInt8], address: BluetoothAddress, addressType: AddressType) -> UInt64 {
            @inline(__always) func mix(_ value: UInt64) -> UInt64 {
                var z = value &* 0xff51_afd7_ed55_8ccd
                z ^= z >> 33
                z = z &* 0xc4ce_b9fe_1a85_ec53
                return z ^ (z >> 29)
            }
            var hash = mix(seed ^ address.rawValue)
            hash = mix(hash ^ (UInt64(addressType.rawValue) << 32 | UInt64(truncatingIfNeeded: data.count)))
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset + 8 <= raw.count {
                    hash = mix(hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    offset += 8
                }
                var tail: UInt64 = 0
                var shift: UInt64 = 0
                while offset < raw.count {
                    tail |= UInt64(raw[offset]) << shift
                    shift += 8
                    offset += 1
                }
                if shift > 0 { hash = mix(hash ^ tail) }
            }
            return hash
        }
    }

    /// What the decoder made of the key's bytes, before name merging.
    package struct Entry: Sendable {
        package var observations: [Observation]
        package var localName: String?
        /// Per observation, the tracker handle of its beacon's slot the last time it was processed (`.none` before
        /// the first time): the pipeline passes it back to the tracker, which then does not hash the beacon id.
        package var handles: [TrackerHandle] = []
    }

    /// Longer advertising data (extended advertising, up to 1,650 bytes) is decoded every time, which bounds the
    /// memory the keys take (at most 2 x 1,024 x 255 bytes).
    static let maximumDataLength = 255

    private var current = RepeatDecodeTable()
    private var previous = RepeatDecodeTable()
    package let capacity: Int
    private(set) var hits: UInt64 = 0
    private(set) var misses: UInt64 = 0

    /// `capacity` 0 turns the cache off (every report decoded; the tests' reference).
    package init(capacity: Int) { self.capacity = max(0, capacity) }

    package var count: Int { current.count + previous.count }

    /// Where an entry is, from `position(for:)` or `insert`, until the cache next changes (`insert`, a lookup
    /// that moves an entry, `removeAll`).
    package typealias Position = Int

    /// The cached entry for `key`, or nil (a miss is counted).
    package mutating func entry(for key: Key) -> Entry? {
        position(for: key).map { entry(at: $0) }
    }

    /// Where the cached entry for `key` is, or nil (a miss is counted). An entry found in the previous generation
    /// moves to the current one.
    package mutating func position(for key: Key) -> Position? {
        guard capacity > 0 else { return nil }
        if let position = current.find(key) {
            hits &+= 1
            return position
        }
        if let slot = previous.find(key) {
            hits &+= 1
            return insert(previous.remove(at: slot), for: key)
        }
        misses &+= 1
        return nil
    }

    package func entry(at position: Position) -> Entry { current.entry(at: position) }

    /// The tracker handle kept for the entry's `observation`th observation (`.none` if none was kept).
    package func handle(at position: Position, observation: Int) -> TrackerHandle {
        current.handle(at: position, observation: observation)
    }

    /// Keeps the tracker handle of the entry's `observation`th observation.
    package mutating func setHandle(_ handle: TrackerHandle, at position: Position, observation: Int) {
        current.setHandle(handle, at: position, observation: observation)
    }

    /// Caches `entry` for `key` (replacing what the current generation has for it); returns where it is (nil when
    /// the cache is off). A full current generation becomes the previous one first, and the previous one is
    /// dropped.
    @discardableResult
    package mutating func insert(_ entry: Entry, for key: Key) -> Position? {
        guard capacity > 0 else { return nil }
        if current.count >= capacity {
            swap(&current, &previous)
            current.removeAll(keepingCapacity: true)
        } else if let position = current.find(key) {
            current.replace(entry, at: position)
            return position
        }
        return current.insert(entry, for: key)
    }

    package mutating func removeAll() {
        current = RepeatDecodeTable()
        previous = RepeatDecodeTable()
    }
}
