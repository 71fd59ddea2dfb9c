import BeaconModel

/// What self-calibration meets in a rooms scenario (issue 29; every figure with its source in docs/scenarios.md,
/// "Gateway links"): each gateway's receive offset (the file's `receiver_offset_db`, plus a random spread),
/// transmit offset of its identity beacon, and antenna/placement gain that acts on both directions alike (and on
/// every beacon it hears); each gateway-to-gateway link's reciprocal placement shadowing and its non-reciprocal
/// part (transmit/receive asymmetry); then the same temporal radio as the people's links.
public struct GatewayLinkRadio: Sendable, Equatable {
    public enum Variant: String, Sendable, CaseIterable {
        case assumed
        case pessimistic
    }

    public var variant: Variant
    /// Identity beacon: advertisements per second, and the share lost (as a beacon's `loss`).
    public var identityRate: Double = 1
    public var identityLoss: Double = 0.3
    /// Spread (dB) of the random receive offset added to each gateway's `receiver_offset_db`.
    public var receiveOffsetSigma: Double
    /// Spread (dB) of each gateway's transmit offset (its identity beacon).
    public var transmitOffsetSigma: Double
    /// Spread (dB) of each gateway's antenna/placement gain, the same for what it sends and what it hears.
    public var reciprocalGainSigma: Double
    /// Spread (dB) of each gateway-gateway link's placement shadowing, the same both ways.
    public var placementSigma: Double = 4.5
    /// Spread (dB) of the difference between a link's two directions (transmit/receive asymmetry).
    public var asymmetrySigma: Double

    public init(_ variant: Variant = .assumed) {
        self.variant = variant
        switch variant {
        case .assumed:
            receiveOffsetSigma = 0
            transmitOffsetSigma = 1
            reciprocalGainSigma = 2
            asymmetrySigma = 2
        case .pessimistic:
            receiveOffsetSigma = 5
            transmitOffsetSigma = 3
            reciprocalGainSigma = 4
            asymmetrySigma = 4
        }
    }
}

/// One seed's draws of the gateway terms (from their own random stream, so the people's links are unchanged).
public struct GatewayDraws: Sendable, Equatable {
    /// Per gateway (plan order): receive offset `g` (file's plus the drawn spread), transmit offset `t`,
    /// antenna/placement gain `a`.
    public var receive: [Double]
    public var transmit: [Double]
    public var gain: [Double]
    /// Per ordered pair [receiver][transmitter]: reciprocal placement shadowing (symmetric) plus half the
    /// asymmetry (antisymmetric).
    public var link: [[Double]]

    /// What a beacon's RSSI at each gateway carries: `g + a` (the truth self-calibration is scored against).
    public var effectiveReceive: [Double] { zip(receive, gain).map { $0 + $1 } }

    public init(_ scenario: RoomScenario) {
        let radio = scenario.gatewayLinks
        let gateways = scenario.plan.gateways
        var random = SimulationRandom(seed: scenario.seed, stream: 1_000_003)
        receive = gateways.map { $0.receiverOffset + radio.receiveOffsetSigma * random.gaussian() }
        transmit = gateways.map { _ in radio.transmitOffsetSigma * random.gaussian() }
        gain = gateways.map { _ in radio.reciprocalGainSigma * random.gaussian() }
        let n = gateways.count
        var link = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for i in 0..<n {
            for j in (i + 1)..<n {
                let shared = radio.placementSigma * random.gaussian()
                let half = radio.asymmetrySigma * random.gaussian() / 2
                link[i][j] = shared + half
                link[j][i] = shared - half
            }
        }
        self.link = link
    }
}

/// A gateway hearing another gateway's identity beacon.
public struct IdentityReport: Sendable, Equatable {
    public var time: Timestamp
    public var receiver: String
    public var transmitter: String
    public var rssi: Double
}

extension RoomScenario {
    /// The scenario as the world realises it for this seed: each gateway's receive offset becomes `g + a` (what
    /// its beacons' RSSI carries), and the arbiter's configured offsets gain the same drawn terms (a manual
    /// calibration that measured them; the rows without it are `uncalibrated` and `calibrated`). Idempotent.
    public func realized() -> RoomScenario {
        guard !gatewayTermsApplied else { return self }
        let draws = GatewayDraws(self)
        var result = self
        for (index, gateway) in plan.gateways.enumerated() {
            let extra = draws.effectiveReceive[index] - gateway.receiverOffset
            result.plan.gateways[index].receiverOffset = draws.effectiveReceive[index]
            result.arbiter.receiverOffsets[gateway.id] = (arbiter.receiverOffsets[gateway.id] ?? 0) + extra
        }
        result.gatewayTermsApplied = true
        result.gatewayDraws = draws
        return result
    }
}

extension RoomSimulator {
    /// What every gateway hears of every other gateway's identity beacon, in time order: the same temporal radio
    /// as a person's link (shadowing, channel offsets, fading, body blocking, loss, sensitivity) from a beacon
    /// standing at the transmitter, with the transmitter's offset and gain, the link's placement and asymmetry,
    /// the walls, and the receiver's `g + a`; the pair's per-channel offsets are the same both ways; none to or from
    /// a gateway while it is down (`RoomScenario.Outage`). Needs a realized scenario (`RoomScenario.realized`).
    public func identityReports() -> [IdentityReport] {
        guard let draws = scenario.gatewayDraws else { return [] }
        let gateways = scenario.plan.gateways
        let radio = scenario.gatewayLinks
        var all: [(IdentityReport, Int)] = []
        for (j, transmitter) in gateways.enumerated() {
            // Streams far above the people's (index * 64 + gateway + 1), so their draws are unchanged.
            let index = 20_000 + j
            for (i, receiver) in gateways.enumerated() where i != j {
                let beacon = ScenarioBeacon(
                    beaconID: "identity:\(transmitter.id)", rate: radio.identityRate, loss: radio.identityLoss,
                    attenuation: -(draws.transmit[j] + draws.gain[j] + draws.link[i][j]),
                    path: [Waypoint(time: 0, x: transmitter.x, y: transmitter.y)])
                let schedule = advertisements(of: beacon, index: index)
                // Multipath at one frequency is the same both ways: a pair's per-channel offsets are shared by
                // its two directions (a person's link draws its own).
                var pair = scenario
                // Gateways stand still: their links carry the placement and asymmetry above, not the people's field.
                pair.spatialBias = SpatialBiasRadio(.off)
                if pair.radio.channelOffsets.isEmpty {
                    var random = SimulationRandom(seed: scenario.seed, stream: 2_000_000 + min(i, j) * 64 + max(i, j))
                    let sigma = scenario.radio.realistic.channelOffsetSigma
                    pair.radio.channelOffsets = (0..<3).map { _ in sigma * random.gaussian() }
                }
                let heard = RoomSimulator(pair).link(beacon, index: index, gateway: i, schedule: schedule).observations
                // A gateway that is down neither sends its identity beacon nor hears the others'.
                for observation in heard {
                    guard let rssi = observation.rssi, !scenario.isDown(receiver.id, at: observation.timestamp),
                        !scenario.isDown(transmitter.id, at: observation.timestamp)
                    else { continue }
                    all.append(
                        (
                            IdentityReport(
                                time: observation.timestamp, receiver: receiver.id, transmitter: transmitter.id,
                                rssi: Double(rssi)), i
                        ))
                }
            }
        }
        all.sort { ($0.0.time, $0.1, $0.0.transmitter) < ($1.0.time, $1.1, $1.0.transmitter) }
        return all.map(\.0)
    }
}
