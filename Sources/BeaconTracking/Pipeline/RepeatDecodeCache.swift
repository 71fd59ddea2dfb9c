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
    package struct Key: Hashable, Sendable {
        package var data: [UInt8]
        package var address: BluetoothAddress
        package var addressType: AddressType

        /// The data as one byte run (an array hashes element by element).
        package func hash(into hasher: inout Hasher) {
            hasher.combine(address)
            hasher.combine(addressType)
            data.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// What the decoder made of the key's bytes, before name merging.
    package struct Entry: Sendable {
        package var observations: [Observation]
        package var localName: String?
    }

    /// Longer advertising data (extended advertising, up to 1,650 bytes) is decoded every time, which bounds the
    /// memory the keys take (at most 2 x 1,024 x 255 bytes).
    static let maximumDataLength = 255

    private var current: [Key: Entry] = [:]
    private var previous: [Key: Entry] = [:]
    package let capacity: Int
    private(set) var hits: UInt64 = 0
    private(set) var misses: UInt64 = 0

    /// `capacity` 0 turns the cache off (every report decoded; the tests' reference).
    package init(capacity: Int) { self.capacity = max(0, capacity) }

    package var count: Int { current.count + previous.count }

    /// The cached entry for `key`, or nil (a miss is counted).
    package mutating func entry(for key: Key) -> Entry? {
        guard capacity > 0 else { return nil }
        if let entry = current[key] {
            hits &+= 1
            return entry
        }
        if let entry = previous.removeValue(forKey: key) {
            hits &+= 1
            insert(entry, for: key)
            return entry
        }
        misses &+= 1
        return nil
    }

    package mutating func insert(_ entry: Entry, for key: Key) {
        guard capacity > 0 else { return }
        if current.count >= capacity {
            previous = current
            current = Dictionary(minimumCapacity: capacity)
        }
        current[key] = entry
    }

    package mutating func removeAll() {
        current = [:]
        previous = [:]
    }
}
