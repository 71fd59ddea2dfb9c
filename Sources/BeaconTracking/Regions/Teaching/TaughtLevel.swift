/// What a teach heard on one link (one device, one receiving gateway) at one spot: a robust centre and spread of
/// its reports, so a few reflections or a body passing by during the recording do not move it.
public struct TaughtLevel: Sendable, Equatable, Hashable {
    /// The median report, dBm.
    public var level: Double
    /// The spread of the reports, dB: the interquartile range divided by 1.349 (a standard deviation for
    /// Gaussian reports, and not pulled by outliers).
    public var spread: Double
    /// Reports the recording kept.
    public var reports: Int
    /// Seconds from the first kept report to the last.
    public var seconds: Double
    /// The median of the recording's second half minus its first half's, dB (`LevelRecorder`): a body stepping
    /// between the device and the gateway for part of the hold shows as a step. Nil when a half had too few
    /// reports, and for a level read back from the store (only the recording knows it; `TeachQuality` judges
    /// the teach when it ends).
    public var step: Double?

    public init(level: Double, spread: Double, reports: Int, seconds: Double, step: Double? = nil) {
        self.level = level
        self.spread = spread
        self.reports = reports
        self.seconds = seconds
        self.step = step
    }

    /// The same recording as heard by a device whose reference power is `decibels` higher (a region taught with
    /// one device and applied to another of the same kind: the link's path is the same, the transmitter is not).
    public func shifted(by decibels: Double) -> TaughtLevel {
        TaughtLevel(level: level + decibels, spread: spread, reports: reports, seconds: seconds, step: step)
    }
}
