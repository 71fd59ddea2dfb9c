/// What was taught and applies to this gateway's decisions (issue 43): a `TaughtRegionLink` per (beacon id,
/// region name) as this gateway hears the beacon, and a reference power (the level at 1 m, dBm) per beacon that
/// replaces the one it advertises for distances. The region engine holds one (`RegionEngine.setTaught`); a pair
/// without a link decides by the configured `rssi_above` / `rssi_below` / distance as before.
public struct TaughtTable: Sendable, Equatable {
    public struct Key: Sendable, Hashable, Comparable {
        public var beaconID: String
        public var region: String

        public init(beaconID: String, region: String) {
            self.beaconID = beaconID
            self.region = region
        }

        public static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.region, lhs.beaconID) < (rhs.region, rhs.beaconID)
        }
    }

    public private(set) var links: [Key: TaughtRegionLink] = [:]
    /// Learned reference powers (`--at 1m`), dBm, per beacon id.
    public private(set) var referencePowers: [String: Int] = [:]

    public init(links: [Key: TaughtRegionLink] = [:], referencePowers: [String: Int] = [:]) {
        for (key, link) in links { set(link, beaconID: key.beaconID, region: key.region) }
        for (beaconID, power) in referencePowers { setReferencePower(power, beaconID: beaconID) }
    }

    public var isEmpty: Bool { links.isEmpty && referencePowers.isEmpty }

    public func link(beaconID: String, region: String) -> TaughtRegionLink? {
        links.isEmpty ? nil : links[Key(beaconID: beaconID, region: region)]
    }

    /// The link a pair decides by: its own, else (with `like`, a region's `taught_like`) that device's link in
    /// the same region moved by the difference of the two devices' learned reference powers (0 dB unless both
    /// were taught at 1 m: devices of one kind transmit alike). Nil when neither was taught.
    public func link(beaconID: String, region: String, like: String?) -> TaughtRegionLink? {
        if let own = link(beaconID: beaconID, region: region) { return own }
        guard let like, like != beaconID, let typical = link(beaconID: like, region: region) else { return nil }
        return typical.shifted(by: likeShift(beaconID: beaconID, like: like))
    }

    /// dB the typical device's link moves for `beaconID`: its reference power minus the typical one's.
    public func likeShift(beaconID: String, like: String) -> Double {
        guard let own = referencePowers[beaconID], let typical = referencePowers[like] else { return 0 }
        return Double(own - typical)
    }

    /// Sets or (nil, or a link without a boundary) removes a pair's link.
    public mutating func set(_ link: TaughtRegionLink?, beaconID: String, region: String) {
        let key = Key(beaconID: beaconID, region: region)
        if let link, link.levels != nil { links[key] = link } else { links[key] = nil }
    }

    /// Sets or (nil) removes a beacon's reference power; a level a receiver cannot report (outside -127...20 dBm)
    /// removes it.
    public mutating func setReferencePower(_ power: Int?, beaconID: String) {
        if let power, (-127...20).contains(power) {
            referencePowers[beaconID] = power
        } else {
            referencePowers[beaconID] = nil
        }
    }

    /// Beacon ids whose links or reference power differ between the two tables (their memberships' levels must
    /// be derived again).
    func changedBeacons(comparedWith other: TaughtTable) -> Set<String> {
        var changed: Set<String> = []
        for key in Set(links.keys).union(other.links.keys) where links[key] != other.links[key] {
            changed.insert(key.beaconID)
        }
        for id in Set(referencePowers.keys).union(other.referencePowers.keys)
        where referencePowers[id] != other.referencePowers[id] {
            changed.insert(id)
        }
        return changed
    }
}
