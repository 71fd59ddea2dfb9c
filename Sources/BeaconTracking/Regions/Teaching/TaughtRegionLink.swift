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

    /// Hysteresis below the enter level when only the boundary was taught: the configured default's 5 dB.
    public static let boundaryOnlyHysteresis = 5.0

    /// The enter and exit levels (dBm) this link's region decisions use, nil until the boundary is taught.
    ///
    /// The boundary's level is where the state should flip, so it is the enter level (reports must still clear it
    /// by the region's enter margin to add evidence). The exit level sits below it: by the configured default's
    /// 5 dB when only the boundary is known; when the inside is known too, by the larger of 2 dB and a fifth of
    /// the separation (a wide separation allows a wide hysteresis).
    public var levels: (enter: Double, exit: Double)? {
        guard let boundary else { return nil }
        guard let inside, inside.level > boundary.level else {
            return (boundary.level, boundary.level - Self.boundaryOnlyHysteresis)
        }
        let hysteresis = max(2, (inside.level - boundary.level) / 5)
        return (boundary.level, boundary.level - hysteresis)
    }

    /// The same link as a device whose reference power is `decibels` higher would show it.
    public func shifted(by decibels: Double) -> TaughtRegionLink {
        TaughtRegionLink(boundary: boundary?.shifted(by: decibels), inside: inside?.shifted(by: decibels))
    }
}
