/// Parameters of the simulator's realistic radio (the default; docs/scenarios.md, "The radio model", gives the
/// sources of every default). The report RSSI is
///
///     mean(distance) − attenuation + shadowing(t) + channel offset + fast fading − body blocking(t)
///
/// - shadowing: Gaussian, σ `shadowingSigma`, correlated as exp(−Δt/`shadowingTime` − Δd/`shadowingDistance`)
///   (Gudmundson's exponential model, in time for a still beacon and in metres moved for a moving one);
/// - channel offset: the scanner listens on one advertising channel for `channelDwell` seconds, then the next;
///   each (beacon, channel) has its own offset, drawn N(0, `channelOffsetSigma`) unless fixed
///   (`ScenarioRadio.channelOffsets`);
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

    public init(
        shadowingSigma: Double = 4, shadowingTime: Double = 5, shadowingDistance: Double = 1.5,
        fadingSigma: Double = 3, channelOffsetSigma: Double = 3, blocking: Blocking = Blocking(),
        lossBurst: Double = 1, lossBurstShare: Double = 0.1, sensitivityWidth: Double = 2,
        advDelayMax: Double = 0.01
    ) {
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
