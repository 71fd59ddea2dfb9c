import BeaconModel
import BeaconTracking

/// A scripted simulation: a gateway at the origin, beacons moving along waypoint paths, the regions and
/// settings under test. The file format (JSON) is documented in docs/scenarios.md.
public struct Scenario: Sendable {
    public var name: String
    public var seed: UInt64
    /// Capture time of the scenario's second 0 (seconds since the Unix epoch).
    public var startTime: Timestamp
    /// Simulated seconds.
    public var duration: Double
    /// How often the runner calls `advance(to:)`, in simulated seconds.
    public var advanceInterval: Double
    public var radio: ScenarioRadio
    public var settings: TrackerSettings
    public var regions: [RegionRule]
    public var beacons: [ScenarioBeacon]
    /// Scenario seconds at which the gateway restarts: state is saved to a store, the engine rebuilt from it.
    public var restarts: [Double]
    /// Seconds the gateway is down at each restart (reports in that time are not heard).
    public var restartDowntime: Double

    public init(
        name: String = "scenario", seed: UInt64 = 1, startTime: Timestamp = 1_700_000_000,
        duration: Double, advanceInterval: Double = 0.25, radio: ScenarioRadio = ScenarioRadio(),
        settings: TrackerSettings = .default, regions: [RegionRule], beacons: [ScenarioBeacon],
        restarts: [Double] = [], restartDowntime: Double = 0
    ) {
        self.name = name
        self.seed = seed
        self.startTime = startTime
        self.duration = duration
        self.advanceInterval = advanceInterval
        self.radio = radio
        self.settings = settings
        self.regions = regions
        self.beacons = beacons
        self.restarts = restarts
        self.restartDowntime = restartDowntime
    }

    /// The distance model matching the radio (used by the engine in simulation and by the ground truth).
    public var distanceModel: SimulationDistance {
        SimulationDistance(pathLossExponent: radio.pathLossExponent, defaultMeasuredPower: radio.defaultMeasuredPower)
    }
}

/// The propagation model: log-distance path loss, then one of the correlated radios (placement and posture
/// offsets, correlated shadowing, channels, fading, body blocking, bursty loss, a sensitivity curve): `measured`
/// (the default, from the measured traces) or `pessimistic` (the 5 s model before issue 30, once called
/// `realistic`); or independent log-normal shadowing per report with a hard noise floor (the original model).
public struct ScenarioRadio: Sendable, Equatable {
    public enum Model: String, Sendable, Equatable, CaseIterable { case measured, pessimistic, independent }

    public var model: Model
    public var pathLossExponent: Double
    /// Independent model: standard deviation of the per-report shadowing, dB (beacons may override).
    public var sigma: Double
    /// Independent model: reports below this RSSI are lost. Realistic model: the 50 % point of the sensitivity curve.
    public var noiseFloor: Double
    /// Measured power at 1 m for beacons that state none.
    public var defaultMeasuredPower: Int
    /// Per advertising channel RSSI offsets (dB). The scanner listens on one channel at a time and moves to the
    /// next every `channelDwell` seconds, so every report in that time carries that channel's offset. Empty: off.
    public var channelOffsets: [Double]
    public var channelDwell: Double
    /// The measured or pessimistic model's parameters (unused by the independent model).
    public var realistic: RealisticRadio

    /// `realistic` nil: the model's own defaults (`RealisticRadio.measured` or `.pessimistic`).
    public init(
        model: Model = .measured, pathLossExponent: Double = 2.7, sigma: Double = 6,
        noiseFloor: Double = -100, defaultMeasuredPower: Int = -59, channelOffsets: [Double] = [],
        channelDwell: Double = 10, realistic: RealisticRadio? = nil
    ) {
        self.model = model
        self.realistic = realistic ?? (model == .measured ? .measured : .pessimistic)
        self.pathLossExponent = pathLossExponent
        self.sigma = sigma
        self.noiseFloor = noiseFloor
        self.defaultMeasuredPower = defaultMeasuredPower
        self.channelOffsets = channelOffsets
        self.channelDwell = channelDwell
    }

    /// The channel offset in force at scenario time `time`.
    public func channelOffset(at time: Double) -> Double {
        guard !channelOffsets.isEmpty else { return 0 }
        return channelOffsets[channel(at: time, count: channelOffsets.count)]
    }

    /// The index of the advertising channel the scanner listens on at `time`, of `count` channels.
    public func channel(at time: Double, count: Int) -> Int {
        guard count > 0, channelDwell > 0, time >= 0 else { return 0 }
        return Int((time / channelDwell).rounded(.down)) % count
    }
}
