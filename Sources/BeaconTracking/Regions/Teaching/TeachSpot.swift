/// Where the installer holds the device while a teach records (`beaconbridge regions teach --at`).
public enum TeachSpot: String, Sendable, CaseIterable, Equatable, Hashable {
    /// At the region's edge: the level where its state should flip.
    case boundary
    /// At a typical spot inside the region.
    case inside
    /// One metre from the gateway: the device's reference power for distances (ESPresense's "calibrate").
    case oneMetre = "1m"
}
