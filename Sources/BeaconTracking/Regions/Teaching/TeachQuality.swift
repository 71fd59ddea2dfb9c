/// Whether a teach is good enough to decide by, and what to do when it is not: the figure a teach shows at its
/// end (`beaconbridge regions teach`, the MQTT command's result, Home Assistant's teach buttons).
public struct TeachQuality: Sendable, Equatable {
    /// What more is needed, one sentence each; empty when the teach is good.
    public var needs: [String]

    public var isGood: Bool { needs.isEmpty }

    /// Reports a spot needs before its median is worth keeping (30 s at 1 Hz, a phone's slow rate, gives 30).
    public static let minimumReports = 20
    /// A spread wider than this (dB) means the device moved or something walked between during the recording.
    public static let maximumSpread = 6.0

    /// Judges one spot's recording.
    public init(spot: TeachSpot, level: TaughtLevel?) {
        needs = Self.needs(of: spot, level)
    }

    /// Judges a region's link: each taught spot, and the separation between inside and boundary when both are.
    public init(link: TaughtRegionLink) {
        var needs = Self.needs(of: .boundary, link.boundary)
        if let inside = link.inside {
            needs += Self.needs(of: .inside, inside)
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

    private static func needs(of spot: TeachSpot, _ level: TaughtLevel?) -> [String] {
        guard let level else { return ["\(spot.rawValue): not taught (no report heard)"] }
        var needs: [String] = []
        if level.reports < minimumReports {
            needs.append(
                "\(spot.rawValue): \(level.reports) reports, at least \(minimumReports) needed: teach longer")
        }
        if level.spread > maximumSpread {
            needs.append(
                "\(spot.rawValue): spread \(decibels(level.spread)) dB, at most \(decibels(maximumSpread)) dB: hold "
                    + "the device still and keep the space between it and the gateway clear")
        }
        return needs
    }

    private static func decibels(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
