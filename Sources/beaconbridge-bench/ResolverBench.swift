import BeaconFormats
import BeaconModel

#if canImport(Glibc)
import Glibc
#endif

/// Private address resolution (issue 11): CPU cost with 50 keys and 200 new private addresses per second among
/// 5,000 reports/s, as a share of one core, and the memory of the caches at 10,000 addresses.
///
/// Traffic of one simulated second: 200 reports from addresses never heard before (20 of them rotations of
/// configured devices, 180 strangers' phones), then 4,800 reports from addresses heard before (a mix of
/// resolved ones, strangers cached as unresolved, and public/static addresses that are no candidates).
enum ResolverBench {
    static let keyCount = 50
    static let reportsPerSecond = 5_000
    static let newPerSecond = 200
    static let ownNewPerSecond = 20
    static let simulatedSeconds = 120

    static func run() {
        var random = SplitMix(state: 0x1157_0B1D)
        let keys = (0..<keyCount).map { _ in
            IdentityResolvingKey(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) })!
        }
        blockCost(keys[0])
        traffic(keys: keys, present: true, random: &random)
        traffic(keys: keys, present: false, random: &random)
        memory(keys: keys)
    }

    /// One `ah()` (one AES-128 block).
    static func blockCost(_ key: IdentityResolvingKey) {
        let count = 2_000_000
        var sink: UInt32 = 0
        let start = TrackerBench.now(CLOCK_THREAD_CPUTIME_ID)
        for prand in 0..<UInt32(count) { sink ^= key.hash(prand: prand, order: .asWritten) }
        let seconds = TrackerBench.now(CLOCK_THREAD_CPUTIME_ID) - start
        print(
            "  ah() (one AES-128 block): \(format(seconds / Double(count) * 1e9, 0)) ns (\(count) blocks; sink \(sink & 1))"
        )
    }

    /// `present`: the configured devices are around (their byte orders are learned in the warm-up, 20 of the
    /// 200 new addresses per second are theirs); otherwise none is (the worst case: no order ever learned,
    /// every new address is tried against every key in both orders).
    static func traffic(keys: [IdentityResolvingKey], present: Bool, random: inout SplitMix) {
        var resolver = PrivateAddressResolver(keys: keys)
        var heard: [(BluetoothAddress, AddressType)] = []
        heard.reserveCapacity(4096)
        // Addresses heard before: resolved ones, strangers, and non-candidates (public, static random).
        for index in 0..<2000 {
            switch index % 4 {
            case 0 where present:
                heard.append(
                    (
                        .resolvablePrivate(
                            prand: UInt32(truncatingIfNeeded: random.next()), key: keys[index % keys.count]),
                        .randomDevice
                    ))
            case 0, 1:
                heard.append(
                    (BluetoothAddress(rawValue: 0x40_0000_000000 | (random.next() & 0x3F_FFFF_FFFFFF)), .randomDevice))
            case 2: heard.append((BluetoothAddress(rawValue: random.next() & 0xFFFF_FFFF_FFFF), .publicDevice))
            default:
                heard.append(
                    (BluetoothAddress(rawValue: 0xC0_0000_000000 | (random.next() & 0x3F_FFFF_FFFFFF)), .randomDevice))
            }
        }
        for (address, type) in heard { _ = resolver.resolve(address, type: type, at: 0) }
        // Pre-generate the traffic so the timed loop only resolves.
        var second: [(BluetoothAddress, AddressType)] = []
        var schedule: [[(BluetoothAddress, AddressType)]] = []
        for _ in 0..<simulatedSeconds {
            second.removeAll(keepingCapacity: true)
            for index in 0..<newPerSecond {
                if present && index < ownNewPerSecond {
                    let key = keys[Int(random.next() % UInt64(keys.count))]
                    second.append(
                        (.resolvablePrivate(prand: UInt32(truncatingIfNeeded: random.next()), key: key), .randomDevice))
                } else {
                    second.append(
                        (
                            BluetoothAddress(rawValue: 0x40_0000_000000 | (random.next() & 0x3F_FFFF_FFFFFF)),
                            .randomDevice
                        ))
                }
            }
            for _ in 0..<(reportsPerSecond - newPerSecond) {
                second.append(heard[Int(random.next() % UInt64(heard.count))])
            }
            schedule.append(second)
        }
        var resolved = 0
        let start = TrackerBench.now(CLOCK_THREAD_CPUTIME_ID)
        for (offset, reports) in schedule.enumerated() {
            let time = Double(offset)
            for (address, type) in reports {
                if case .resolved = resolver.resolve(address, type: type, at: time) { resolved += 1 }
            }
        }
        let cpu = TrackerBench.now(CLOCK_THREAD_CPUTIME_ID) - start
        let share = cpu / Double(simulatedSeconds) * 100
        print(
            "  \(keyCount) keys, \(reportsPerSecond) reports/s with \(newPerSecond) new private addresses/s "
                + "(\(present ? "10 % of them from configured devices" : "no configured device present: both byte orders tried")): "
                + "\(format(cpu / Double(simulatedSeconds) * 1e3, 3)) ms CPU per second of traffic = "
                + "\(format(share, 3)) % of a core (goal < 0.5 %); \(simulatedSeconds) s simulated, "
                + "\(resolver.counters.blocks) AES blocks, \(resolved) reports resolved, "
                + "\(resolver.cachedResolved) + \(resolver.cachedUnresolved) addresses cached")
    }

    /// RSS growth per resolver holding 10,000 unresolved and, separately, 10,000 resolved addresses; measured
    /// over 20 resolvers each so the figure is above page granularity.
    static func memory(keys: [IdentityResolvingKey]) {
        let copies = 20
        let addresses = 10_000
        let one = [keys[0]]
        for resolvedKind in [false, true] {
            var kept: [PrivateAddressResolver] = []
            // Memory the earlier benches freed stays resident in the heap and would be reused without growing RSS
            // (this printed 0 KiB): hand it back to the kernel first, so the growth is the caches' own.
            TrackerBench.releaseFreedMemory()
            let before = TrackerBench.resident()
            for copy in 0..<copies {
                var resolver = PrivateAddressResolver(
                    keys: one, orders: [.asWritten],
                    settings: .init(positiveCapacity: addresses, negativeCapacity: addresses))
                for index in 0..<addresses {
                    let prand = UInt32(copy * addresses + index)
                    let address =
                        resolvedKind
                        ? BluetoothAddress.resolvablePrivate(prand: prand, key: one[0])
                        : BluetoothAddress(rawValue: 0x40_0000_000000 | UInt64(prand) << 8)
                    _ = resolver.resolve(address, type: .randomDevice, at: 0)
                }
                precondition((resolvedKind ? resolver.cachedResolved : resolver.cachedUnresolved) == addresses)
                kept.append(resolver)
            }
            let growth = Double(TrackerBench.resident() - before) / Double(copies)
            print(
                "  cache memory at \(addresses) \(resolvedKind ? "resolved" : "unresolved") addresses: "
                    + "\(format(growth / 1024, 0)) KiB (\(format(growth / Double(addresses), 1)) bytes per address; "
                    + "RSS growth over \(kept.count) resolvers)")
        }
    }

    static func format(_ value: Double, _ places: Int) -> String {
        var text = String(Int((value * pow(10, Double(places))).rounded()))
        guard places > 0 else { return text }
        while text.count <= places { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -places))
        return text
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
