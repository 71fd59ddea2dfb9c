import BeaconModel
import BeaconRooms

/// Self-calibration over one run (issue 29): the solver (`GatewayCalibration`, the core's) fed the gateways'
/// identity reports in time order and solved every `interval` seconds from the start, as a gateway site would;
/// the offsets of every solve (for the `calibrated` row, which uses each from its time on) and how they compare
/// with the simulated truth (`g + a` of every gateway; only differences between gateways count, so both are
/// centred on their mean before comparing).
public struct RoomCalibrationRun: Sendable, Equatable {
    public struct Step: Sendable, Equatable {
        public var time: Timestamp
        public var offsets: [String: Double]
        /// Largest |estimate - truth| over the gateways (both centred), dB.
        public var maxError: Double
    }

    public var steps: [Step]
    /// Gateway ids, truth (centred `g + a`), the last estimate (centred) and its confidence.
    public var gateways: [(id: String, truth: Double, estimate: Double, confidence: Double)]
    /// Scenario seconds from the start to the first solve at which every gateway's estimate (centred) is within
    /// `convergedWithin` dB of its own mean over the second half of the run (nil: never, or no solve); and how
    /// much the estimates wander after that (RMS over the second half's solves and the gateways of the estimate
    /// less that mean, dB): the medians of a noisy window never settle to one value.
    public var convergeTime: Double?
    public var wander: Double
    public static let convergedWithin = 1.0
    /// The last estimate's error against the truth (RMS and max over gateways, dB), and what using no offsets
    /// at all would leave (the truth's own spread).
    public var finalErrorRMS: Double
    public var finalErrorMax: Double
    public var uncalibratedErrorRMS: Double

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.steps == rhs.steps && lhs.convergeTime == rhs.convergeTime && lhs.finalErrorRMS == rhs.finalErrorRMS
    }

    public init(
        scenario: RoomScenario, reports: [IdentityReport], interval: Double = 10,
        settings: GatewayCalibration.Settings = GatewayCalibration.Settings()
    ) {
        let ids = scenario.plan.gateways.map(\.id)
        let truth = Self.centred(scenario.plan.gateways.map(\.receiverOffset))
        var calibration = GatewayCalibration(settings: settings)
        var steps: [Step] = []
        var next = 0
        var last: GatewayCalibration.Solution?
        var tick = scenario.startTime + interval
        let end = scenario.startTime + scenario.duration
        while tick <= end {
            while next < reports.count, reports[next].time <= tick {
                let report = reports[next]
                calibration.record(
                    receiver: report.receiver, transmitter: report.transmitter, rssi: report.rssi, at: report.time)
                next += 1
            }
            let solution = calibration.solve(at: tick)
            let estimate = Self.centred(ids.map { solution.offset(of: $0)?.receive ?? 0 })
            let error = zip(estimate, truth).map { abs($0 - $1) }.max() ?? 0
            steps.append(
                Step(
                    time: tick,
                    offsets: Dictionary(
                        uniqueKeysWithValues: zip(ids, ids.map { solution.offset(of: $0)?.receive ?? 0 })),
                    maxError: error))
            last = solution
            tick += interval
        }
        self.steps = steps
        let final = Self.centred(ids.map { last?.offset(of: $0)?.receive ?? 0 })
        gateways = ids.indices.map {
            (ids[$0], truth[$0], final[$0], last?.offset(of: ids[$0])?.confidence ?? 0)
        }
        let errors = zip(final, truth).map { $0 - $1 }
        finalErrorRMS = Self.rms(errors)
        finalErrorMax = errors.map { abs($0) }.max() ?? 0
        uncalibratedErrorRMS = Self.rms(truth)
        let centredSteps = steps.map { step in Self.centred(ids.map { step.offsets[$0] ?? 0 }) }
        let half = centredSteps.suffix(centredSteps.count / 2)
        let settled = ids.indices.map { index in
            half.reduce(0) { $0 + $1[index] } / Double(max(half.count, 1))
        }
        wander = Self.rms(half.flatMap { zip($0, settled).map { $0 - $1 } })
        convergeTime =
            half.isEmpty
            ? nil
            : zip(steps, centredSteps).first { _, estimate in
                zip(estimate, settled).allSatisfy { abs($0 - $1) <= Self.convergedWithin }
            }.map { $0.0.time - scenario.startTime }
    }

    static func centred(_ values: [Double]) -> [Double] {
        let mean = values.reduce(0, +) / Double(max(values.count, 1))
        return values.map { $0 - mean }
    }

    static func rms(_ values: [Double]) -> Double {
        (values.reduce(0) { $0 + $1 * $1 } / Double(max(values.count, 1))).squareRoot()
    }
}

/// The arbiter with the scenario's settings, but the receiver offsets replaced by self-calibration's as each
/// solve becomes available (none before the first: a new site starts uncalibrated).
struct SelfCalibratedArbiter: RoomDeciding {
    var arbiter: RoomArbiter
    let base: RoomArbiterSettings
    let steps: [RoomCalibrationRun.Step]
    var next = 0
    let trained: Bool
    let label: String?
    var name: String { label ?? (trained ? "trained" : "calibrated") }

    /// With `fingerprints` (the training phase's book), the `trained` row: set before the first sighting. `name`
    /// names another row (`fp-margin`).
    init(
        settings: RoomArbiterSettings, steps: [RoomCalibrationRun.Step], fingerprints: FingerprintBook? = nil,
        name: String? = nil
    ) {
        label = name
        var start = settings
        start.receiverOffsets = [:]
        base = settings
        arbiter = RoomArbiter(settings: start)
        if let fingerprints { arbiter.setFingerprints(fingerprints) }
        trained = fingerprints != nil
        self.steps = steps
    }

    mutating func catchUp(to time: Timestamp) {
        var latest: [String: Double]?
        while next < steps.count, steps[next].time <= time {
            latest = steps[next].offsets
            next += 1
        }
        guard let latest else { return }
        var settings = base
        settings.receiverOffsets = latest
        arbiter.reconfigure(settings)
    }

    mutating func process(_ sighting: RoomSighting) -> [RoomChange] {
        catchUp(to: sighting.time)
        return arbiter.process(sighting)
    }

    mutating func advance(to now: Timestamp) -> [RoomChange] {
        catchUp(to: now)
        return arbiter.advance(to: now)
    }

    func room(of beaconID: String) -> String?? { arbiter.room(of: beaconID) }

    mutating func gatewaysOffline(_ gateways: Set<String>, now: Timestamp) -> [RoomChange] {
        catchUp(to: now)
        return arbiter.setOffline(gateways, now: now)
    }
}
