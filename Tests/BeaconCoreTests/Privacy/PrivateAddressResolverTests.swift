import Testing

@testable import BeaconFormats
@testable import BeaconModel

/// `ah()` and the resolver with the Core specification's sample data (Vol 3 Part H, Appendix D.7:
/// IRK ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa).
@Suite struct PrivateAddressResolverTests {
    static let sampleKey = "ec0234a357c8ad05341010a60a397d9b"
    static let sampleKeyReversed = "9b7d390aa610103405adc857a33402ec"
    static let sampleAddress = BluetoothAddress(string: "70:81:94:0D:FB:AA")!

    @Test func ahMatchesTheSpecificationSample() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        #expect(key.hash(prand: 0x708194, order: .asWritten) == 0x0DFBAA)
        #expect(key.matches(Self.sampleAddress, order: .asWritten))
        #expect(!key.matches(Self.sampleAddress, order: .reversed))
        #expect(Self.sampleAddress.isResolvablePrivate)
        #expect(Self.sampleAddress.privatePrand == 0x708194)
        #expect(Self.sampleAddress.privateHash == 0x0DFBAA)
    }

    @Test(arguments: [
        (sampleKey, KeyByteOrder.asWritten),
        ("irk:" + sampleKey, .asWritten),
        ("EC:02:34:A3:57:C8:AD:05:34:10:10:A6:0A:39:7D:9B", .asWritten),
        ("7AI0o1fIrQU0EBCmCjl9mw==", .asWritten),
        (sampleKeyReversed, .reversed),
        ("m305CqYQEDQFrchXozQC7A==", .reversed),
    ])
    func resolvesInEitherByteOrderAndRemembersWhich(_ text: String, _ expected: KeyByteOrder) throws {
        let key = try #require(IdentityResolvingKey(text: text))
        var resolver = PrivateAddressResolver(keys: [key])
        #expect(
            resolver.resolve(Self.sampleAddress, type: .randomDevice, at: 0) == .resolved(device: 0, order: expected))
        #expect(resolver.orders == [expected])
        let learned = resolver.takeLearnedOrders()
        #expect(learned.map(\.device) == [0] && learned.map(\.order) == [expected])
        #expect(resolver.takeLearnedOrders().isEmpty)
    }

    @Test(arguments: [
        "", "ec0234a357c8ad05341010a60a397d9", "ec0234a357c8ad05341010a60a397d9b00",
        "zc0234a357c8ad05341010a60a397d9b", "7AI0o1fIrQU0EBCmCjl9", "7AI0o1fIrQU0EBCmCjl9mw=",
        "7AI0o1fIrQU0EBCmCjl9mw=A", "AAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func rejectsMalformedKeys(_ text: String) {
        #expect(IdentityResolvingKey(text: text) == nil)
        #expect(IdentityResolvingKey.problem(with: text) != nil)
    }

    @Test func problemsAndDescriptionNeverRepeatTheKey() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        #expect(!key.description.lowercased().contains("ec0234"))
        #expect(key.fingerprint.count == 8)
        #expect(!Self.sampleKey.contains(key.fingerprint))
        let broken = String(Self.sampleKey.dropLast())
        #expect(IdentityResolvingKey.problem(with: broken)?.contains("ec0234") == false)
    }

    @Test(arguments: [
        ("70:81:94:0D:FB:AA", AddressType.publicDevice),  // a public address is never a candidate
        ("F0:81:94:0D:FB:AA", .randomDevice),  // 11: static random
        ("30:81:94:0D:FB:AA", .randomDevice),  // 00: non-resolvable private
        ("B0:81:94:0D:FB:AA", .randomDevice),  // 10: reserved
        ("70:81:94:0D:FB:AA", .randomIdentity),  // already resolved by the controller
    ])
    func onlyRandomAddressesWithTopBits01AreCandidates(_ text: String, _ type: AddressType) throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        var resolver = PrivateAddressResolver(keys: [key])
        #expect(resolver.resolve(BluetoothAddress(string: text)!, type: type, at: 0) == .notPrivate)
        #expect(resolver.counters.blocks == 0)
    }

    @Test func eachNewAddressCostsOnePassAndCachesAnswerTheRest() throws {
        let keys = try (0..<5).map { index in
            try #require(
                IdentityResolvingKey(bytes: (0..<16).map { UInt8(truncatingIfNeeded: $0 * 7 + index * 31 + 1) }))
        }
        var resolver = PrivateAddressResolver(keys: keys)
        let mine = BluetoothAddress.resolvablePrivate(prand: 0x12_3456, key: keys[3])
        #expect(resolver.resolve(mine, type: .randomDevice, at: 10) == .resolved(device: 3, order: .asWritten))
        // Keys 0-2 were tried in both orders, then key 3 matched as written.
        #expect(resolver.counters.blocks == 7)
        #expect(resolver.resolve(mine, type: .randomDevice, at: 11) == .resolved(device: 3, order: .asWritten))
        #expect(resolver.counters.blocks == 7)
        #expect(resolver.counters.positiveHits == 1)

        let stranger = BluetoothAddress(rawValue: 0x45_6789_ABCDEF)
        #expect(resolver.resolve(stranger, type: .randomDevice, at: 12) == .unresolved)
        // Key 3's order is known now: 4 keys x 2 orders + 1.
        #expect(resolver.counters.blocks == 7 + 9)
        #expect(resolver.resolve(stranger, type: .randomDevice, at: 13) == .unresolved)
        #expect(resolver.counters.blocks == 16)
        #expect(resolver.counters.negativeHits == 1)
        #expect(resolver.lastSeen[3] == 11)
        #expect(resolver.lastSeen[0] == nil)
    }

    @Test func resolvedAddressesExpireAfterTheirLifetime() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        var resolver = PrivateAddressResolver(keys: [key], settings: .init(lifetime: 60))
        _ = resolver.resolve(Self.sampleAddress, type: .randomDevice, at: 0)
        _ = resolver.resolve(Self.sampleAddress, type: .randomDevice, at: 50)  // refreshed: expires at 110
        #expect(resolver.counters.blocks == 1, "matched as written on the first block, then cached")
        resolver.expire(at: 100)
        #expect(resolver.cachedResolved == 1)
        resolver.expire(at: 111)
        #expect(resolver.cachedResolved == 0)
        #expect(
            resolver.resolve(Self.sampleAddress, type: .randomDevice, at: 200)
                == .resolved(device: 0, order: .asWritten))
        #expect(resolver.counters.blocks == 2, "resolved again, one block")
    }

    @Test func negativeCacheIsBoundedOldestFirst() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        var resolver = PrivateAddressResolver(keys: [key], settings: .init(negativeCapacity: 100))
        for index in 0..<250 {
            let address = BluetoothAddress(rawValue: 0x40_0000_000000 | UInt64(index))
            #expect(resolver.resolve(address, type: .randomDevice, at: Double(index)) == .unresolved)
        }
        #expect(resolver.cachedUnresolved == 100)
        let blocks = resolver.counters.blocks
        // The newest 100 (150...249) are cached; 0 was evicted and costs a pass again.
        _ = resolver.resolve(BluetoothAddress(rawValue: 0x40_0000_000000 | 249), type: .randomDevice, at: 300)
        #expect(resolver.counters.blocks == blocks)
        _ = resolver.resolve(BluetoothAddress(rawValue: 0x40_0000_000000), type: .randomDevice, at: 301)
        #expect(resolver.counters.blocks == blocks + 2)
        #expect(resolver.cachedUnresolved == 100)
    }

    @Test func positiveCacheIsBounded() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKey))
        var resolver = PrivateAddressResolver(keys: [key], settings: .init(positiveCapacity: 10))
        for index in 0..<40 {
            let address = BluetoothAddress.resolvablePrivate(prand: UInt32(index), key: key)
            #expect(
                resolver.resolve(address, type: .randomDevice, at: Double(index))
                    == .resolved(device: 0, order: .asWritten))
        }
        #expect(resolver.cachedResolved == 10)
    }

    @Test func restoredOrdersSkipTheOtherOrder() throws {
        let key = try #require(IdentityResolvingKey(text: Self.sampleKeyReversed))
        var resolver = PrivateAddressResolver(keys: [key], orders: [.reversed])
        #expect(
            resolver.resolve(Self.sampleAddress, type: .randomDevice, at: 0) == .resolved(device: 0, order: .reversed))
        #expect(resolver.counters.blocks == 1)
        #expect(resolver.takeLearnedOrders().isEmpty, "restored, not learned")
    }
}
