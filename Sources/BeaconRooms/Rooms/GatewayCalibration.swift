import BeaconModel

/// Self-calibration of the gateways' receive offsets from what they hear of each other's identity beacons
/// (issue 29; the model and its limits are in docs/rooms.md, "Self-calibration").
///
/// Model. Gateway `i` hearing gateway `j`'s identity beacon reads, as a robust level over a window (the median),
/// `m_ij = t_j + g_i + a_i + a_j + L_ij + e_ij`: `t_j` the transmitter's offset, `g_i` the receiver's, `a_i`
/// and `a_j` each gateway's antenna and placement gain (the same both ways), `L_ij = L_ji` the path (distance,
/// walls, placement shadowing of the link; reciprocal, unknown) and `e_ij` what is not reciprocal (a few dB of
/// transmit/receive asymmetry, the median's own noise). The difference of the two directions of a pair,
/// `m_ij - m_ji = d_i - d_j + (e_ij - e_ji)` with `d_i = g_i - t_i`, is all that pairs can tell, so:
/// - identified: `d_i` up to one constant per connected group of gateways (weighted least squares over every
///   pair heard both ways, with a zero-mean prior on each `d_i` that fixes the constant and keeps a gateway
///   that hears nobody at 0 with no confidence);
/// - the receive offset a beacon needs, `g_i + a_i`, is **not** identified: the split of `d_i` into `g_i` and
///   `t_i` comes from a prior (every gateway sets the same transmit power: `t` has a small spread
///   `transmitSigma` against `receiveSigma` for `g`), and `a_i` cancels in every pair, so it is invisible to
///   this solver whatever the data (a stationary reference tag, or a manual measurement, is needed for it).
/// Only differences between gateways matter to a room decision, so the constant is immaterial.
///
/// Pure: time comes with every input, no I/O; inputs are untrusted and rejected (never a trap) when they are
/// not finite, out of the HCI RSSI range, name no gateway or the same one twice, or exceed the bounds.
public struct GatewayCalibration: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Seconds of samples whose median is a link's level.
        public var window: Double = 300
        /// Samples each direction of a pair needs within the window before the pair counts.
        public var minimumSamples: Int = 10
        /// Prior spread (dB) of the receivers' offsets `g` (field notes: receivers differ by up to ~15 dB).
        public var receiveSigma: Double = 5
        /// Prior spread (dB) of the transmitters' offsets `t` (every gateway set to the same power; assumption).
        public var transmitSigma: Double = 1
        /// Spread (dB) of the difference between a link's two directions (transmit/receive asymmetry; assumption).
        public var asymmetrySigma: Double = 2
        /// Spread (dB) of each gateway's antenna/placement gain, which pairs cannot see (assumption): not estimated,
        /// only added to every `uncertainty`.
        public var gainSigma: Double = 2
        /// Bounds on memory: gateways tracked, and samples kept per direction of a pair.
        public var maximumGateways: Int = 64
        public var maximumSamplesPerLink: Int = 600

        public init() {}
    }

    /// Why an observation was not recorded.
    public enum Rejection: Error, Sendable, Equatable {
        case notFinite
        case rssiOutOfRange(Double)
        case invalidGatewayID
        case sameGateway
        case tooManyGateways
        case olderThanWindow
    }

    /// One gateway's offsets as solved. `receive` is what to subtract from its beacons' RSSI (dB, louder
    /// positive), `transmit` its identity beacon's offset, `difference` their identified difference `g - t`.
    public struct Offset: Sendable, Equatable {
        public var gatewayID: String
        public var receive: Double
        public var transmit: Double
        public var difference: Double
        /// Standard deviation (dB) of `receive` against the truth, relative to the other gateways: the posterior's
        /// from the data and the priors, plus the unseen antenna/placement gain (`gainSigma`).
        public var uncertainty: Double
        /// 0 (prior only: heard by or hearing nobody both ways) to 1: how well the pairs pin `difference`; it
        /// says nothing of the parts pairs cannot see (the gain, the transmit offset: `uncertainty` does).
        public var confidence: Double
        /// Other gateways it is paired with (heard both ways with enough samples), and samples of those pairs.
        public var pairs: Int
        public var samples: Int
        /// RMS (dB) of its pairs' residuals after the fit (0 with a single pair: nothing to check against).
        public var residual: Double
    }

    public struct Solution: Sendable, Equatable {
        public var time: Timestamp
        /// Every gateway seen, sorted by id.
        public var offsets: [Offset]
        /// Pairs used in the fit.
        public var pairs: Int

        public func offset(of gatewayID: String) -> Offset? { offsets.first { $0.gatewayID == gatewayID } }
        /// The receive offsets as the arbiter takes them (`RoomArbiterSettings.receiverOffsets`).
        public var receiverOffsets: [String: Double] {
            Dictionary(offsets.map { ($0.gatewayID, $0.receive) }, uniquingKeysWith: { first, _ in first })
        }
    }

    public let settings: Settings
    /// Gateway ids in the order first seen (index into `links`).
    private(set) var gateways: [String] = []
    private var index: [String: Int] = [:]
    /// Samples per direction, keyed by receiver * maximumGateways + transmitter, in arrival order.
    private var links: [Int: [(time: Timestamp, rssi: Double)]] = [:]
    private(set) var latest: Timestamp = -.infinity

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// Records that `receiver` heard `transmitter`'s identity beacon at `rssi` dBm at `time`; nil when recorded,
    /// else why not.
    @discardableResult
    public mutating func record(
        receiver: String, transmitter: String, rssi: Double, at time: Timestamp
    ) -> Rejection? {
        guard rssi.isFinite, time.isFinite else { return .notFinite }
        guard rssi >= -127, rssi <= 20 else { return .rssiOutOfRange(rssi) }
        guard Self.validID(receiver), Self.validID(transmitter) else { return .invalidGatewayID }
        guard receiver != transmitter else { return .sameGateway }
        guard time > latest - settings.window else { return .olderThanWindow }
        guard let r = slot(receiver), let t = slot(transmitter) else { return .tooManyGateways }
        latest = max(latest, time)
        let key = r * settings.maximumGateways + t
        var samples = links[key] ?? []
        samples.append((time, rssi))
        let overflow = samples.count - max(settings.maximumSamplesPerLink, 1)
        if overflow > 0 { samples.removeFirst(overflow) }
        links[key] = samples
        return nil
    }

    /// Solves the offsets from the samples of the last `window` seconds before `now` (older ones are dropped).
    public mutating func solve(at now: Timestamp) -> Solution {
        if now.isFinite {
            let cutoff = now - settings.window
            for key in links.keys.sorted() {
                links[key] = links[key]?.filter { $0.time > cutoff }
            }
        }
        return GatewayCalibration.fit(levels: levels(), gateways: gateways, settings: settings, time: now)
    }

    /// What `receiver` hears of each other gateway's identity beacon: the median level (dBm) of each direction
    /// with enough samples, by transmitter id. Moving a gateway changes these by several dB at once (the paths
    /// change; the offsets do not), which is how a taught link notices it (`TaughtRecord.anchors`).
    public func levelsHeard(by receiver: String) -> [String: Double] {
        guard let r = index[receiver] else { return [:] }
        var result: [String: Double] = [:]
        for (key, level) in levels() where key / settings.maximumGateways == r {
            let t = key % settings.maximumGateways
            if t < gateways.count { result[gateways[t]] = level.median }
        }
        return result
    }

    /// Each direction's robust level: median, sample count and a robust spread (1.4826 × MAD).
    package struct Level: Equatable {
        package var median: Double
        package var count: Int
        package var spread: Double
    }

    package func levels() -> [Int: Level] {
        var result: [Int: Level] = [:]
        for (key, samples) in links where samples.count >= max(settings.minimumSamples, 1) {
            let values = samples.map(\.rssi).sorted()
            let median = Self.median(values)
            let deviations = values.map { abs($0 - median) }.sorted()
            result[key] = Level(median: median, count: values.count, spread: 1.4826 * Self.median(deviations))
        }
        return result
    }

    package static func median(_ sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private mutating func slot(_ id: String) -> Int? {
        if let existing = index[id] { return existing }
        guard gateways.count < settings.maximumGateways else { return nil }
        index[id] = gateways.count
        gateways.append(id)
        return gateways.count - 1
    }

    static func validID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && !id.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
