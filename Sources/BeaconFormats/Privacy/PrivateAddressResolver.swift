import BeaconModel

/// Turns resolvable private addresses into configured devices: a pure state machine owned by the pipeline.
///
/// Each address costs at most one pass over the keys: a positive cache maps an address to its device for the
/// address's lifetime (refreshed on every hit, so a device that keeps an address keeps its entry), and a
/// bounded negative cache (oldest entry evicted first) remembers addresses that matched no key. A key whose
/// byte order has matched once is tried in that order only from then on; before that, both orders are tried.
public struct PrivateAddressResolver: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Seconds a resolved address stays cached after it was last heard (devices rotate about every 15 min).
        public var lifetime: Double
        /// Most resolved addresses kept (expired entries are dropped first when full).
        public var positiveCapacity: Int
        /// Most unresolved addresses remembered.
        public var negativeCapacity: Int

        public init(lifetime: Double = 1800, positiveCapacity: Int = 4096, negativeCapacity: Int = 10_000) {
            self.lifetime = lifetime
            self.positiveCapacity = max(1, positiveCapacity)
            self.negativeCapacity = max(1, negativeCapacity)
        }
    }

    public enum Resolution: Sendable, Equatable {
        /// Not a resolvable private address (public, static random, non-resolvable): nothing to resolve.
        case notPrivate
        /// Resolved to the key at `device` (index into the keys), in `order`.
        case resolved(device: Int, order: KeyByteOrder)
        /// A resolvable private address that matches no configured key.
        case unresolved
    }

    public struct Counters: Sendable, Equatable {
        public var lookups: UInt64 = 0
        public var positiveHits: UInt64 = 0
        public var negativeHits: UInt64 = 0
        /// AES-128 blocks computed (each new address costs up to keys x orders).
        public var blocks: UInt64 = 0
        public var resolvedAddresses: UInt64 = 0
        public var unresolvedAddresses: UInt64 = 0
        public init() {}
    }

    struct Resolved: Sendable {
        package var device: Int32
        package var order: KeyByteOrder
        package var expires: Timestamp
    }

    public let settings: Settings
    public private(set) var counters = Counters()
    package let keys: [IdentityResolvingKey]
    /// The byte order each key has matched in, nil until one has.
    public private(set) var orders: [KeyByteOrder?]
    /// Capture time each key last resolved an address, nil until it has.
    public private(set) var lastSeen: [Timestamp?]
    private var positive: [UInt64: Resolved] = [:]
    private var negative: Set<UInt64> = []
    private var negativeOrder: [UInt64] = []
    private var negativeNext = 0
    private var learned: [Int] = []

    /// `orders` restores byte orders learned before (from the state database); missing entries are unknown.
    public init(keys: [IdentityResolvingKey], orders: [KeyByteOrder?] = [], settings: Settings = Settings()) {
        self.keys = keys
        self.settings = settings
        self.orders = keys.indices.map { $0 < orders.count ? orders[$0] : nil }
        self.lastSeen = Array(repeating: nil, count: keys.count)
    }

    public var keyCount: Int { keys.count }
    public var cachedResolved: Int { positive.count }
    public var cachedUnresolved: Int { negative.count }

    /// Resolves one address heard at `time`. Only random addresses whose two top bits are 01 are candidates.
    public mutating func resolve(_ address: BluetoothAddress, type: AddressType, at time: Timestamp) -> Resolution {
        guard type == .randomDevice, address.isResolvablePrivate else { return .notPrivate }
        counters.lookups += 1
        let raw = address.rawValue
        if var hit = positive[raw] {
            if hit.expires >= time {
                counters.positiveHits += 1
                hit.expires = time + settings.lifetime
                positive[raw] = hit
                lastSeen[Int(hit.device)] = time
                return .resolved(device: Int(hit.device), order: hit.order)
            }
            positive[raw] = nil
        } else if negative.contains(raw) {
            counters.negativeHits += 1
            return .unresolved
        }
        let prand = address.privatePrand
        let hash = address.privateHash
        for index in keys.indices {
            let key = keys[index]
            if let order = orders[index] {
                counters.blocks += 1
                if key.hash(prand: prand, order: order) == hash {
                    return remember(raw, device: index, order: order, at: time)
                }
                continue
            }
            for order in KeyByteOrder.allCases {
                counters.blocks += 1
                if key.hash(prand: prand, order: order) == hash {
                    orders[index] = order
                    learned.append(index)
                    return remember(raw, device: index, order: order, at: time)
                }
            }
        }
        counters.unresolvedAddresses += 1
        rememberUnresolved(raw)
        return .unresolved
    }

    /// Keys whose byte order was learned since the last call (for the state database), with the order.
    public mutating func takeLearnedOrders() -> [(device: Int, order: KeyByteOrder)] {
        defer { learned.removeAll() }
        return learned.compactMap { index in orders[index].map { (index, $0) } }
    }

    /// Drops cached addresses whose lifetime ran out (the daemon calls this on its tick).
    public mutating func expire(at time: Timestamp) {
        positive = positive.filter { $0.value.expires >= time }
    }

    private mutating func remember(_ raw: UInt64, device: Int, order: KeyByteOrder, at time: Timestamp) -> Resolution {
        counters.resolvedAddresses += 1
        if positive.count >= settings.positiveCapacity {
            expire(at: time)
            if positive.count >= settings.positiveCapacity,
                let oldest = positive.min(by: { $0.value.expires < $1.value.expires })
            {
                positive[oldest.key] = nil
            }
        }
        positive[raw] = Resolved(device: Int32(device), order: order, expires: time + settings.lifetime)
        lastSeen[device] = time
        return .resolved(device: device, order: order)
    }

    private mutating func rememberUnresolved(_ raw: UInt64) {
        if negativeOrder.count < settings.negativeCapacity {
            negativeOrder.append(raw)
        } else {
            negative.remove(negativeOrder[negativeNext])
            negativeOrder[negativeNext] = raw
            negativeNext = (negativeNext + 1) % settings.negativeCapacity
        }
        negative.insert(raw)
    }
}
