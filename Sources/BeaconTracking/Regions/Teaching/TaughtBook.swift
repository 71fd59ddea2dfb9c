import BeaconModel

/// Every taught record a gateway knows of its site (its own and the other gateways'), by retained topic: what
/// it stores, shows (`devices status`) and turns into its engine's `TaughtTable`.
public struct TaughtBook: Sendable, Equatable {
    public let site: String
    public private(set) var records: [String: TaughtRecord] = [:]
    /// At most this many records (a site's gateways × regions × devices); beyond it a new record is refused.
    public static let capacity = 4_096

    public init(site: String) { self.site = site }

    /// Adds or replaces a record (by its topic); false when the book is full.
    @discardableResult
    public mutating func put(_ record: TaughtRecord) -> Bool {
        let topic = record.topic(prefix: site)
        guard records[topic] != nil || records.count < Self.capacity else { return false }
        records[topic] = record
        return true
    }

    /// Removes the record on `topic`; the removed one.
    @discardableResult
    public mutating func remove(topic: String) -> TaughtRecord? { records.removeValue(forKey: topic) }

    /// The records of one device (and region: nil for its reference power) on one gateway.
    public func record(gateway: String, region: String?, device: String) -> TaughtRecord? {
        let probe = TaughtRecord(site: site, gateway: gateway, region: region, device: device, levels: [:], recorded: 0)
        return records[probe.topic(prefix: site)]
    }

    /// What `gateway`'s engine decides by: its own links, and each device's reference power from the gateway
    /// that heard it loudest at 1 m (the one it was held 1 m from).
    public func table(gateway: String) -> TaughtTable {
        var table = TaughtTable()
        var loudest: [String: Double] = [:]
        for record in records.values {
            if let region = record.region, record.gateway == gateway {
                table.set(record.link, beaconID: record.device, region: region)
            } else if record.region == nil, let level = record.levels[.oneMetre]?.level,
                level > loudest[record.device] ?? -.infinity
            {
                loudest[record.device] = level
            }
        }
        for (device, level) in loudest { table.setReferencePower(Int(level.rounded()), beaconID: device) }
        return table
    }

    /// Records sorted by region, device, gateway (reference powers first), for status.
    public var sorted: [TaughtRecord] {
        records.values.sorted { ($0.region ?? "", $0.device, $0.gateway) < ($1.region ?? "", $1.device, $1.gateway) }
    }
}
