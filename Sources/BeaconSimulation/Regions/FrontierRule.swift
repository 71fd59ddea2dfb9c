import BeaconModel

/// One simple region rule of the latency / false-transition frontier (`beaconbridge simulate --frontier`,
/// docs/tracking-and-regions.md, "Is the latency goal attainable"): the mean RSSI of the reports of the last
/// `window` seconds against the enter level plus `offset` dB; exit once that mean has not been at or above the
/// exit level for the exit timeout (also after that long without any report). The exit timeout is the region's
/// exit period less `exitShortening` seconds (0, or half the window to make up for the mean's lag).
public struct FrontierRule: Sendable, Equatable {
    public var window: Double
    public var offset: Double
    public var exitShortening: Double

    public init(window: Double, offset: Double, exitShortening: Double) {
        self.window = window
        self.offset = offset
        self.exitShortening = exitShortening
    }

    /// E.g. `mean-20s+2dB-exitP` (exit timeout the exit period P) or `mean-20s+2dB-exitP-10s`.
    public var name: String {
        let sign = offset < 0 ? "" : "+"
        let exit = exitShortening > 0 ? "exitP-\(Self.text(exitShortening))s" : "exitP"
        return "mean-\(Self.text(window))s\(sign)\(Self.text(offset))dB-\(exit)"
    }

    func timeout(_ exitPeriod: Double) -> Double { max(exitPeriod - exitShortening, 0) }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The family `--frontier` runs: windows 5-60 s, offsets −2...+6 dB, each with the full exit period and with
    /// the exit period less half the window.
    public static let family: [FrontierRule] = {
        var rules: [FrontierRule] = []
        for window in [5.0, 10, 15, 20, 30, 45, 60] {
            for offset in [-2.0, 0, 1, 2, 3, 4, 6] {
                for shortening in [0, window / 2] {
                    rules.append(FrontierRule(window: window, offset: offset, exitShortening: shortening))
                }
            }
        }
        return rules
    }()
}
