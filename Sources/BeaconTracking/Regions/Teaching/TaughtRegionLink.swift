/// What was taught for one region on one link (one device as one gateway hears it): the level at the boundary
/// and, when taught, inside. A taught link sets the region's enter and exit levels for that link instead of the
/// configured `rssi_above` / `rssi_below`, which a user can only guess and which carry the link's constant offset
/// (placement, the device's own power, the wall between) that the teach measures away.
public struct TaughtRegionLink: Sendable, Equatable, Hashable {
    public var boundary: TaughtLevel?
    public var inside: TaughtLevel?

    public init(boundary: TaughtLevel? = nil, inside: TaughtLevel? = nil) {
        self.boundary = boundary
        self.inside = inside
    }

    /// Hysteresis below the enter level: the configured default's 5 dB (`RegionCondition.defaultExit`).
    public static let boundaryOnlyHysteresis = 5.0
    /// dB the enter level sits below the taught boundary. A region's enter margin (3.5 dB with `balanced`) guards
    /// against the unknown constant offset a configured level carries (placement σ 4.5 dB); a taught link's
    /// offset is measured, so 2 dB of that margin is given back: reports add evidence from 1.5 dB above the
    /// boundary (with `balanced`). Chosen from the simulator's figures (issue 43, docs/tracking-and-regions.md,
    /// "Measured figures (issue 43): taught links": 0, 1.5, 2, 2.5 and 3 dB tried).
    public static let taughtEnterAllowance = 2.0

    /// The enter and exit levels (dBm) this link's region decisions use, nil until the boundary is taught.
    ///
    /// The boundary's level is where the state should flip. The enter level sits `taughtEnterAllowance` below it
    /// (the region's enter margin still applies above the enter level); the exit level sits the configured
    /// default's 5 dB below the enter level, as for a configured level (a narrower hysteresis, once a fifth of
    /// the inside-boundary separation, made 66 false exits where 5 dB made 44 on the same streams). The inside
    /// level does not move the levels: it judges the teach (`TeachQuality`).
    public var levels: (enter: Double, exit: Double)? {
        levels(enterAllowance: Self.taughtEnterAllowance, hysteresis: Self.boundaryOnlyHysteresis)
    }

    /// The enter and exit levels with another allowance below the taught boundary and another distance of the
    /// exit level below the enter level (dB): what `levels` gives with `taughtEnterAllowance` and
    /// `boundaryOnlyHysteresis`. The simulator's frontier (`simulate --frontier --teach`) runs a grid of these.
    public func levels(enterAllowance: Double, hysteresis: Double) -> (enter: Double, exit: Double)? {
        guard let boundary else { return nil }
        let enter = boundary.level - enterAllowance
        return (enter, enter - hysteresis)
    }

    /// The same link as a device whose reference power is `decibels` higher would show it.
    public func shifted(by decibels: Double) -> TaughtRegionLink {
        TaughtRegionLink(boundary: boundary?.shifted(by: decibels), inside: inside?.shifted(by: decibels))
    }
}
