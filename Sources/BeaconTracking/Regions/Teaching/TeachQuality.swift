/// Whether a teach is good enough to decide by, and what to do when it is not: the figure a teach shows at its
/// end (`beaconbridge regions teach`, the MQTT command's result, Home Assistant's teach buttons).
public struct TeachQuality: Sendable, Equatable {
    /// What more is needed, one sentence each; empty when the teach is good.
    public var needs: [String]

    public var isGood: Bool { needs.isEmpty }

    /// Which of the recording's figures judge it, besides its reports (always checked).
    public struct Checks: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The spread of the reports against `maximumSpread`.
        public static let spread = Checks(rawValue: 1)
        /// The step between the halves of the recording against `maximumStep` (docs/tracking-and-regions.md,
        /// "A step within the teach's hold").
        public static let step = Checks(rawValue: 2)
        /// What the product judges by.
        public static let standard: Checks = [.spread]
    }

    /// Reports a spot needs before its median is worth keeping (30 s at 1 Hz, a phone's slow rate, gives 30).
    public static let minimumReports = 20
    /// A spread wider than this (dB) means the device moved or something walked between during the recording.
    public static let maximumSpread = 6.0
    /// A step between the medians of a recording's halves (`TaughtLevel.step`) this large (dB) or larger means
    /// something stood between the device and the gateway for part of the hold: the least body blocking the
    /// field notes measure (8-15 dB). Without one, the halves of a still hold differ by their medians' noise
    /// (σ 1.6-2.7 dB, more at a phone's 1 Hz) and those of a turning hold also by its postures (σ 3 dB between
    /// two halves of two postures each; σ 3.6-4.3 dB in all), so 8 dB is reached by 0.25 % of still holds and
    /// 5 % of turning ones without blocking (simulated; docs/tracking-and-regions.md, "A step within the
    /// teach's hold").
    public static let maximumStep = 8.0

    /// Judges one spot's recording.
    public init(spot: TeachSpot, level: TaughtLevel?, checks: Checks = .standard) {
        needs = Self.needs(of: spot, level, checks)
    }

    /// Judges a region's link: each taught spot, and the separation between inside and boundary when both are.
    public init(link: TaughtRegionLink, checks: Checks = .standard) {
        var needs = Self.needs(of: .boundary, link.boundary, checks)
        if let inside = link.inside {
            needs += Self.needs(of: .inside, inside, checks)
            if let boundary = link.boundary {
                let separation = inside.level - boundary.level
                let noise = max(inside.spread, boundary.spread)
                if separation < noise {
                    needs.append(
                        "inside is only \(Self.decibels(separation)) dB above the boundary, less than the reports' "
                            + "spread (\(Self.decibels(noise)) dB): teach the inside nearer the gateway, or the "
                            + "boundary farther out")
                }
            }
        }
        self.needs = needs
    }

    private static func needs(of spot: TeachSpot, _ level: TaughtLevel?, _ checks: Checks) -> [String] {
        guard let level else { return ["\(spot.rawValue): not taught (no report heard)"] }
        var needs: [String] = []
        if level.reports < minimumReports {
            needs.append(
                "\(spot.rawValue): \(level.reports) reports, at least \(minimumReports) needed: teach longer")
        }
        if checks.contains(.spread), level.spread > maximumSpread {
            needs.append(
                "\(spot.rawValue): spread \(decibels(level.spread)) dB, at most \(decibels(maximumSpread)) dB: hold "
                    + "the device still and keep the space between it and the gateway clear")
        }
        if checks.contains(.step), let step = level.step, abs(step) >= maximumStep {
            let when = "\(step < 0 ? "dropped" : "rose") \(decibels(abs(step))) dB half way through"
            needs.append(
                "\(spot.rawValue): the level \(when): someone may have stood between the device and the gateway for "
                    + "part of the teach; teach again with the space between them clear")
        }
        return needs
    }

    private static func decibels(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
