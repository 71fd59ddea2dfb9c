import BeaconModel

/// A taught link whose gateway has moved since it was taught (docs/teach.md, "When a gateway moves").
public struct TaughtMove: Sendable, Equatable {
    /// The median change (dB, absolute) of what the gateway hears of its peers' identity beacons since the teach.
    public var shift: Double
    /// Peers heard both at the teach and now.
    public var peers: Int
    /// Capture time the change was first seen.
    public var since: Timestamp

    public init(shift: Double, peers: Int, since: Timestamp) {
        self.shift = shift
        self.peers = peers
        self.since = since
    }
}

extension TaughtRecord {
    /// A change of at least this much (dB, the median over the peers) says the gateway moved. Self-calibration's
    /// levels are medians of 300 s of a fixed pair (about 1 dB of their own noise); a person standing in one
    /// pair's path changes that pair by a few dB, not the median of several; a gateway moved across a room
    /// changes every pair (docs/rooms.md, "Self-calibration").
    public static let movedShift: Double = 6
    /// ... held for this long (s, self-calibration's window: one crowd passing is not a move).
    public static let movedHold: Double = 300
    /// At most this many anchors in a record (a site's gateways).
    public static let maximumAnchors = 64

    /// How far what the gateway hears now (`heard`, dBm by peer) is from its anchors: the median absolute change
    /// over the peers in both, and how many; nil when no peer is in both.
    public func anchorShift(heard: [String: Double]) -> (shift: Double, peers: Int)? {
        let changes = anchors.compactMap { peer, then in heard[peer].map { abs($0 - then) } }.sorted()
        guard !changes.isEmpty else { return nil }
        let middle = changes.count / 2
        let median = changes.count % 2 == 1 ? changes[middle] : (changes[middle - 1] + changes[middle]) / 2
        return (median, changes.count)
    }

    /// The anchors and the move as JSON members (none when there are none).
    var movedMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if !anchors.isEmpty {
            members.append(
                (
                    "anchors",
                    .object(anchors.keys.sorted().map { ($0, .double(((anchors[$0] ?? 0) * 10).rounded() / 10)) })
                )
            )
        }
        if let moved {
            members.append(
                (
                    "moved",
                    .object([
                        ("shift_db", .double((moved.shift * 10).rounded() / 10)), ("peers", .int(Int64(moved.peers))),
                        ("since", .double(moved.since)),
                    ])
                ))
        }
        return members
    }

    /// Reads `anchors` and `moved` from a record's JSON, each optional and checked; the refusal when one is bad.
    mutating func readMoved(_ json: JSONValue) -> TeachCommand.Failure? {
        func refuse(_ step: String, _ message: String) -> TeachCommand.Failure {
            TeachCommand.Failure(id: nil, kind: "refused", step: step, message: message)
        }
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case let .int(v)?: Double(v)
            case let .double(v)?: v.isFinite ? v : nil
            default: nil
            }
        }
        switch json["anchors"] {
        case nil: break
        case let .object(members)?:
            guard members.count <= Self.maximumAnchors else {
                return refuse("anchors", "more than \(Self.maximumAnchors) gateways")
            }
            for (peer, value) in members {
                guard CommandEnvelope.isPrintable(peer, max: 128), anchors[peer] == nil,
                    let level = number(value), (-127...20).contains(level)
                else { return refuse("anchors", "each anchor is a gateway id (once) and a level in -127...20 dBm") }
                anchors[peer] = level
            }
        default: return refuse("anchors", "`anchors` must be an object")
        }
        switch json["moved"] {
        case nil, .null?: break
        case let value?:
            guard let shift = number(value["shift_db"]), (0...200).contains(shift),
                let peers = number(value["peers"]), peers == peers.rounded(),
                (1...Double(Self.maximumAnchors)).contains(peers),
                let since = number(value["since"]), since >= 0
            else {
                return refuse("moved", "`moved` needs shift_db (0...200), peers (1...64) and since (a capture time)")
            }
            moved = TaughtMove(shift: shift, peers: Int(peers), since: since)
        }
        return nil
    }
}

/// Watches this gateway's taught records for a move (docs/teach.md, "When a gateway moves"): a record is marked
/// moved once what the gateway hears of its peers has stayed `TaughtRecord.movedShift` dB or more from the
/// record's anchors for `TaughtRecord.movedHold` seconds. Pure: the caller hands it the levels and the time.
public struct TaughtMoveWatch: Sendable {
    /// Since when each record (by topic) has been off its anchors.
    private var suspects: [String: Timestamp] = [:]

    public init() {}

    /// The records of `book` taught on `gateway` that have now moved, each with `moved` set (to store and
    /// publish); records already marked, without anchors, or back within the bound are not returned.
    public mutating func check(
        _ book: TaughtBook, gateway: String, heard: [String: Double], at now: Timestamp
    ) -> [TaughtRecord] {
        var moved: [TaughtRecord] = []
        var seen: Set<String> = []
        for (topic, record) in book.records where record.gateway == gateway && record.moved == nil {
            guard let (shift, peers) = record.anchorShift(heard: heard), shift >= TaughtRecord.movedShift else {
                continue
            }
            seen.insert(topic)
            let since = suspects[topic] ?? now
            suspects[topic] = since
            guard now - since >= TaughtRecord.movedHold else { continue }
            var marked = record
            marked.moved = TaughtMove(shift: shift, peers: peers, since: since)
            moved.append(marked)
        }
        suspects = suspects.filter { seen.contains($0.key) }
        return moved.sorted { $0.topic(prefix: book.site) < $1.topic(prefix: book.site) }
    }
}
