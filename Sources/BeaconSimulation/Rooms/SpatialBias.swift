import BeaconModel

/// What a fingerprint meets in a rooms scenario (issue 29; every figure with its source in docs/scenarios.md,
/// "Spatial bias"): a bias of each gateway's link that depends on where the beacon is, the same for every device
/// at that spot (furniture, walls and the floor plan's multipath do not care who carries the beacon) and
/// correlated over about `correlationDistance` metres, so that a fingerprint taken at one spot helps nearby
/// and not across the room; and a posture term per person and stay, part of it shared by all the person's
/// links (one body), the rest per link. The `off` variant is the model before it (neither term: the easier world, kept for comparison).
///
/// The field of gateway g is σ·√(2/N)·Σᵢ cos(kᵢ·(x, y) + φᵢ) over N plane waves of random direction and phase
/// (a Gaussian-like field of variance σ²; isotropic, its correlation at distance d is the mean of J₀(|k|d),
/// which falls to 1/e at |k|d ≈ 1.6: the wavelengths are drawn uniformly within ±25 % of
/// 2π·`correlationDistance`/1.6). Deterministic per (seed, gateway): coming back to a spot gives the same bias.
public struct SpatialBiasRadio: Sendable, Equatable {
    public enum Variant: String, Sendable, CaseIterable {
        case measured
        case off
    }

    public var variant: Variant
    /// Spread (dB) of the position-dependent link bias.
    public var sigma: Double
    /// Metres over which the field's correlation falls to 1/e.
    public var correlationDistance: Double = 1.5
    /// Plane waves per gateway.
    public var waves = 8
    /// Spread (dB) of a person's posture term per stay, and the share of its variance shared by all the person's
    /// links.
    public var postureSigma: Double
    public var postureShared: Double = 0.5

    public init(_ variant: Variant = .measured) {
        self.variant = variant
        switch variant {
        case .measured:
            sigma = 4.5
            postureSigma = 3.0
        case .off:
            sigma = 0
            postureSigma = 0
        }
    }

    public var isOff: Bool { sigma == 0 && postureSigma == 0 }

    /// The `spatial_bias` block: `variant` sets the defaults, the other keys override them.
    init(_ block: ScenarioFields) throws(ScenarioError) {
        var fields = block
        let name = try fields.string("variant") ?? Variant.measured.rawValue
        guard let variant = Variant(rawValue: name) else {
            throw ScenarioError(path: fields.keyPath("variant"), message: "must be 'measured' or 'off'")
        }
        self.init(variant)
        sigma = try fields.double("sigma_db", default: sigma)
        correlationDistance = try fields.double("correlation_m", default: correlationDistance)
        waves = try fields.int("waves") ?? waves
        postureSigma = try fields.double("posture_sigma_db", default: postureSigma)
        postureShared = try fields.double("posture_shared", default: postureShared)
        let path = fields.path
        try fields.finish()
        for (key, value) in [("sigma_db", sigma), ("posture_sigma_db", postureSigma)] where !(value >= 0 && value <= 20)
        {
            throw ScenarioError(kind: .invalid, path: path + "." + key, message: "must be 0...20 dB")
        }
        guard correlationDistance >= 0.1, correlationDistance <= 20 else {
            throw ScenarioError(kind: .invalid, path: path + ".correlation_m", message: "must be 0.1...20 metres")
        }
        guard (1...64).contains(waves) else {
            throw ScenarioError(kind: .invalid, path: path + ".waves", message: "must be 1...64")
        }
        guard postureShared >= 0, postureShared <= 1 else {
            throw ScenarioError(kind: .invalid, path: path + ".posture_shared", message: "must be 0...1")
        }
    }
}

/// One seed's spatial field, per gateway (plan order), and the posture draws.
public struct SpatialField: Sendable {
    struct Wave: Sendable {
        var kx: Double, ky: Double, phase: Double
    }

    let radio: SpatialBiasRadio
    let seed: UInt64
    let waves: [[Wave]]

    public init(_ scenario: RoomScenario) {
        let settings = scenario.spatialBias
        radio = settings
        seed = scenario.seed
        let nominal = 2 * Double.pi * settings.correlationDistance / 1.6
        waves = scenario.plan.gateways.indices.map { gateway in
            guard settings.sigma > 0 else { return [] }
            var random = SimulationRandom(seed: scenario.seed, stream: 4_000_000 + gateway)
            return (0..<settings.waves).map { _ in
                let angle = random.uniform(0, 2 * Double.pi)
                let wavenumber = 2 * Double.pi / (nominal * random.uniform(0.75, 1.25))
                return Wave(
                    kx: wavenumber * Self.cosine(angle), ky: wavenumber * Self.cosine(angle - Double.pi / 2),
                    phase: random.uniform(0, 2 * Double.pi))
            }
        }
    }

    /// The link bias (dB) of gateway `gateway` at (x, y).
    public func bias(gateway: Int, x: Double, y: Double) -> Double {
        guard gateway < waves.count, !waves[gateway].isEmpty else { return 0 }
        let list = waves[gateway]
        var sum = 0.0
        for wave in list { sum += Self.cosine(wave.kx * x + wave.ky * y + wave.phase) }
        return radio.sigma * (2 / Double(list.count)).squareRoot() * sum
    }

    /// Per segment of a person's path (`ScenarioBeacon.segment(at:)`), the posture term of each gateway's link:
    /// √shared·Q + √(1 − shared)·Qₗ with Q drawn once per segment for all links and Qₗ per link, σ `postureSigma`.
    /// `stream` is the person's own (its index in the simulator's streams).
    public func postures(person: ScenarioBeacon, stream: Int, gateways: Int) -> [[Double]] {
        let segments = person.path.count + 1
        guard radio.postureSigma > 0 else {
            return Array(repeating: Array(repeating: 0, count: gateways), count: segments)
        }
        var random = SimulationRandom(seed: seed, stream: 6_000_000 + stream)
        let shared = radio.postureShared.squareRoot()
        let own = max(0, 1 - radio.postureShared).squareRoot()
        return (0..<segments).map { _ in
            let body = random.gaussian()
            return (0..<gateways).map { _ in radio.postureSigma * (shared * body + own * random.gaussian()) }
        }
    }

    /// cos(x) for any finite x: reduced to [0, π] and then to [0, π/2], a Taylor series to x¹⁶ (error < 1e-12).
    static func cosine(_ value: Double) -> Double {
        guard value.isFinite else { return .nan }
        let twoPi = 2 * Double.pi
        var x = value - twoPi * (value / twoPi).rounded(.down)
        if x > Double.pi { x = twoPi - x }
        var sign = 1.0
        if x > Double.pi / 2 {
            x = Double.pi - x
            sign = -1
        }
        let x2 = x * x
        var term = 1.0
        var sum = 1.0
        for n in stride(from: 2, through: 16, by: 2) {
            term *= -x2 / Double(n * (n - 1))
            sum += term
        }
        return sign * sum
    }
}
