import BeaconDelivery
import BeaconModel
import BeaconRuntime
import BeaconTracking
import Synchronization

/// What the status page and `/metrics` show, copied by the daemon's loop once a second (its tick, and at the end
/// of a replay) from the counters it owns: the HTTP thread reads the newest copy under a short lock and never
/// touches the loop's state, and the per-report path takes no lock it did not take before.
struct StatusSnapshot: Sendable {
    var gatewayID = ""
    var isReplay = false
    /// The loop's clock (capture time in a replay, wall time live) and the process's uptime, in seconds.
    var clock: Double = 0
    var uptime: Double = 0

    // Reports and decoding (PipelineCounters, the source's statistics, TrackerCounters).
    var hciEvents: UInt64 = 0
    var reports: UInt64 = 0
    var beaconObservations: UInt64 = 0
    var malformedEvents: UInt64 = 0
    var sourceDropped: UInt64 = 0
    var unresolvedPrivateReports: UInt64 = 0
    var replayedFrames: UInt64 = 0
    var resolvedReports: UInt64 = 0
    var scanRestarts: UInt64 = 0
    var trackedBeacons = 0
    var beaconsAdded: UInt64 = 0
    var evictions: UInt64 = 0

    // Events (the daemon's own counts, by kind) and their delivery (PublisherCounters).
    var events = EventCounts()
    var encodeFailures = 0
    var published = 0
    var acknowledged = 0
    var backlogRows = 0
    var backlogBytes = 0
    var inflight = 0
    var deadLettered = 0
    var deadLetterRows = 0
    var droppedByReason: [String: Int] = [:]
    /// Seconds from an event's acceptance to the broker's acknowledgement (the delivery machine's histogram).
    var latency = DeliveryLatency()
    var brokerConnected = false
    var brokerConnects = 0
    var connectionFailures = 0
    /// The webhook's outbox backlog (rows it has not had acknowledged), nil without a webhook.
    var webhookBacklog: Int?

    // Rooms (nil when off) and the ESPHome proxy (nil when off).
    var roomsLeader: Bool?
    /// The site's rooms, their fingerprints (what was trained), and the training walk that runs now.
    var siteRooms: [String] = []
    var fingerprints: [FingerprintSummary] = []
    var training: TrainingProgress?
    var esphomeClients: Int?

    /// The most recently seen beacons (at most `StatusBoard.beaconRows`), copied only while someone looks at the
    /// page (a view in the last minute).
    var beacons: [TrackedBeaconRow] = []
    /// Per listed beacon: its RSSI a second apart over the last minutes (`RSSIHistory`; `RSSIHistory.gap` for a
    /// second without a report), and with rooms its room and probabilities.
    var rssi: [String: [Int8]] = [:]
    var beaconRooms: [String: BeaconRoom] = [:]

    /// The configured regions (the teach and forget forms), the teaches running here, and whether actions are on
    /// (the action token is set: the page shows its forms).
    var regionNames: [String] = []
    var teaches: [TeachProgress] = []
    var actionsEnabled = false
}

/// A beacon's room as this gateway decides it: the room (`not_home` when it is in none), and with the fingerprint
/// classifier every room's probability, most likely first.
struct BeaconRoom: Sendable {
    var room: String?
    var probabilities: [(room: String, probability: Double)]
}

/// A teach that runs on this gateway: its region (nil for a 1 m reference), device, spot, and how far it got.
struct TeachProgress: Sendable {
    var region: String?
    var device: String
    var spot: String
    var seconds: Double
    var secondsLeft: Double
    var reports: Int

    /// 0-1.
    var fraction: Double { seconds > 0 ? max(0, min(1, 1 - secondsLeft / seconds)) : 1 }
}

/// A room's fingerprint: training walks, seconds recorded, quality (dB).
struct FingerprintSummary: Sendable {
    var room: String
    var walks: Int
    var seconds: Double
    var quality: Double
}

/// The training walk that runs: its room and device, and how far it got at the loop's clock.
struct TrainingProgress: Sendable {
    var room: String
    var device: String
    var start: Double
    var duration: Double
    var clock: Double

    /// 0-1.
    var fraction: Double { duration > 0 ? max(0, min(1, (clock - start) / duration)) : 1 }
}

/// Engine events encoded, by kind (counted per published batch on the loop, not per report).
struct EventCounts: Sendable, Equatable {
    var sighting = 0
    var presence = 0
    var region = 0

    mutating func count(_ event: EngineEvent) {
        switch event {
        case .sighting: sighting += 1
        case .presence: presence += 1
        case .region: region += 1
        }
    }
}

/// The newest `StatusSnapshot`, handed from the loop to the HTTP thread (`@unchecked` is not needed: a Mutex).
/// Also the last replies to rooms commands (the page's progress of an action), and where actions go.
final class StatusBoard: Sendable {
    private let latest = Mutex(StatusSnapshot())
    private let replies = Mutex<[String]>([])
    private let actions = Mutex<(@Sendable (DaemonInput) -> Bool)?>(nil)
    private let lastPageView = Atomic<Double>(-.infinity)

    /// Beacons listed on the page at most.
    static let beaconRows = 200

    /// The page was asked for (the HTTP thread): the loop copies the beacons for a minute from now.
    func notePageView() { lastPageView.store(SystemClock.monotonic(), ordering: .relaxed) }

    /// Whether the page was viewed in the last minute (the loop: copy the beacons or not).
    var pageViewed: Bool { SystemClock.monotonic() - lastPageView.load(ordering: .relaxed) < 60 }

    func publish(_ snapshot: StatusSnapshot) { latest.withLock { $0 = snapshot } }

    var snapshot: StatusSnapshot { latest.withLock { $0 } }

    /// A reply to a rooms or regions command (the loop), the newest 5 kept.
    func noteReply(_ payload: String) {
        replies.withLock {
            $0.append(String(payload.prefix(2048)))
            if $0.count > 5 { $0.removeFirst($0.count - 5) }
        }
    }

    /// The newest replies, oldest first.
    var lastReplies: [String] { replies.withLock { $0 } }

    /// Where actions are posted (the daemon's mailbox), once the daemon exists.
    func connectActions(_ post: @escaping @Sendable (DaemonInput) -> Bool) { actions.withLock { $0 = post } }

    /// Posts an action; false when the daemon is not there (yet, or any more).
    func post(_ input: DaemonInput) -> Bool {
        guard let post = actions.withLock({ $0 }) else { return false }
        return post(input)
    }
}
