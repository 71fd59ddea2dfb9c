import BeaconModel

/// Parameters of the simulator's correlated radios: `measured` (the default, every figure from the measured
/// public traces in the field notes) and `pessimistic` (`RealisticRadio()`, the model before issue 30, whose 5 s
/// shadowing is more correlated than any measured trace). docs/scenarios.md, "The radio model", gives the
/// source of every default. The report RSSI is
///
///     mean(distance) − attenuation + placement + posture + shadowing(t) + channel offset + fast fading
///     − body blocking(t)
///
/// - placement: a constant per link, N(0, `placementSigma`) (walls and furniture: the link's median around the
///   log-distance law);
/// - posture: N(0, `postureSigma`), drawn anew at each waypoint of the beacon's path (each rest or walk is a
///   posture: how the beacon lies or the body holding it faces);
/// - shadowing: Gaussian, σ `shadowingSigma`, correlated as exp(−Δt/`shadowingTime` − Δd/`shadowingDistance`)
///   (Gudmundson's exponential model, in time for a still beacon and in metres moved for a moving one); with
///   `channelMixing` each advertising channel has its own independent shadowing process;
/// - channel offset: each (beacon, channel) has its own offset, drawn N(0, `channelOffsetSigma`) unless fixed
///   (`ScenarioRadio.channelOffsets`); with `channelMixing` every report comes from a channel drawn at random
///   (a hopping scanner), otherwise the scanner listens on one channel for `channelDwell` seconds, then the next;
/// - fast fading: independent per report, N(0, `fadingSigma`);
/// - body blocking: episodes every `blocking.meanInterval` seconds on average (exponential gaps), lasting
///   uniform `blocking.minLength...maxLength` s, taking uniform `blocking.minDepth...maxDepth` dB away;
/// - loss: a Gilbert-Elliott channel: a bad state (mean length `lossBurst` s, `lossBurstShare` of the time) in
///   which every advertisement is lost, a good state whose loss makes the beacon's mean loss its `loss`;
/// - receiver sensitivity: a report of RSSI r is received with probability 1 / (1 + e^−(r − floor)/width)
///   (`noiseFloor` is the 50 % point, `sensitivityWidth` the logistic scale);
/// - advertising interval: 1/rate plus the BLE advDelay, uniform 0...`advDelayMax` s.
public struct RealisticRadio: Sendable, Equatable {
    public struct Blocking: Sendable, Equatable {
        /// Mean seconds between the starts of episodes; 0 turns blocking off.
        public var meanInterval: Double
        public var minLength: Double
        public var maxLength: Double
        public var minDepth: Double
        public var maxDepth: Double

        public init(
            meanInterval: Double = 600, minLength: Double = 10, maxLength: Double = 30,
            minDepth: Double = 8, maxDepth: Double = 15
        ) {
            self.meanInterval = meanInterval
            self.minLength = minLength
            self.maxLength = maxLength
            self.minDepth = minDepth
            self.maxDepth = maxDepth
        }
    }

    public var shadowingSigma: Double
    public var shadowingTime: Double
    public var shadowingDistance: Double
    public var fadingSigma: Double
    public var channelOffsetSigma: Double
    public var blocking: Blocking
    public var lossBurst: Double
    public var lossBurstShare: Double
    public var sensitivityWidth: Double
    public var advDelayMax: Double
    /// Reports come from a random advertising channel each, with one shadowing process per channel.
    public var channelMixing: Bool
    public var placementSigma: Double
    public var postureSigma: Double

    /// The defaults are the pessimistic model's (`RealisticRadio.pessimistic`).
    public init(
        shadowingSigma: Double = 4, shadowingTime: Double = 5, shadowingDistance: Double = 1.5,
        fadingSigma: Double = 3, channelOffsetSigma: Double = 3, blocking: Blocking = Blocking(),
        lossBurst: Double = 1, lossBurstShare: Double = 0.1, sensitivityWidth: Double = 2,
        advDelayMax: Double = 0.01, channelMixing: Bool = false, placementSigma: Double = 0,
        postureSigma: Double = 0
    ) {
        self.channelMixing = channelMixing
        self.placementSigma = placementSigma
        self.postureSigma = postureSigma
        self.shadowingSigma = shadowingSigma
        self.shadowingTime = shadowingTime
        self.shadowingDistance = shadowingDistance
        self.fadingSigma = fadingSigma
        self.channelOffsetSigma = channelOffsetSigma
        self.blocking = blocking
        self.lossBurst = lossBurst
        self.lossBurstShare = lossBurstShare
        self.sensitivityWidth = sensitivityWidth
        self.advDelayMax = advDelayMax
    }
}

extension RealisticRadio {
    /// The radio before issue 30: 4 dB shadowing correlated over 5 s, 10 s channel dwells, no constant offsets.
    public static let pessimistic = RealisticRadio()

    /// The radio of the measured public traces (field notes, "Radio in real rooms"; docs/scenarios.md):
    /// - one channel, body-worn, still: std 3.7 dB, ~80 % of its variance correlated with T = 2.1 s, so
    ///   shadowing √0.8 × 3.7 ≈ 3.3 dB with τ 2.1 s per channel and fast fading √0.2 × 3.7 ≈ 1.65 dB;
    /// - channels mixed packet by packet, their means 4.9 dB apart max-min: the expected range of three normal
    ///   draws is 1.69 σ, so σ ≈ 2.9 dB;
    /// - placement 4.3-4.8 dB: 4.5 dB; posture 8.5 dB median max-min over 8 orientations: the expected range
    ///   of eight normal draws is 2.85 σ, so σ ≈ 3.0 dB;
    /// - loss: a 0.8 s bad state 2 % of the time gives, at 15 % loss and a 453 ms spacing, 1.04 % of runs of
    ///   three missed slots (measured 1.06 %, independent loss 0.34 %);
    /// - body blocking 8-15 dB (measured magnitude) in 5-60 s episodes once per 10 minutes (an assumption).
    public static let measured = RealisticRadio(
        shadowingSigma: 3.3, shadowingTime: 2.1, shadowingDistance: 1.5, fadingSigma: 1.65,
        channelOffsetSigma: 2.9,
        blocking: Blocking(meanInterval: 600, minLength: 5, maxLength: 60, minDepth: 8, maxDepth: 15),
        lossBurst: 0.8, lossBurstShare: 0.02, sensitivityWidth: 2, advDelayMax: 0.01, channelMixing: true,
        placementSigma: 4.5, postureSigma: 3.0)
}

extension RealisticRadio {
    /// How much of the shadowing survives `elapsed` s in which the beacon moved `moved` m (both simulators):
    /// e^−(elapsed/`shadowingTime` + moved/`shadowingDistance`); with `shadowingDistance` 0, nothing survives.
    func shadowingCorrelation(elapsed: Double, moved: Double) -> Double {
        let decay =
            elapsed / max(shadowingTime, 1e-9)
            + (shadowingDistance > 0 ? moved / shadowingDistance : .infinity)
        return ElementaryMath.exp(-decay)
    }
}
