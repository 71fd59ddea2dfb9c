import BeaconTracking

/// One point of the taught links' grid of `beaconbridge simulate --frontier --teach` (docs/tracking-and-regions.md,
/// "The taught and oracle frontier"): how a taught link's levels are set from its teach (`enterAllowance` dB below
/// the taught boundary for the enter level, the exit level `hysteresis` dB below that:
/// `TaughtRegionLink.levels(enterAllowance:hysteresis:)`) and the region keys that trade false transitions against
/// latency on a taught link (`enter_margin_db`, `enter_evidence_db`, `exit_period_s`). Every other key is the
/// scenario's (with `--sensitivity`, the preset's).
public struct TaughtFrontierRule: Sendable, Equatable {
    public var enterAllowance: Double
    public var hysteresis: Double
    public var enterMargin: Double
    public var enterEvidence: Double
    public var exitPeriod: Double

    public init(
        enterAllowance: Double, hysteresis: Double, enterMargin: Double, enterEvidence: Double, exitPeriod: Double
    ) {
        self.enterAllowance = enterAllowance
        self.hysteresis = hysteresis
        self.enterMargin = enterMargin
        self.enterEvidence = enterEvidence
        self.exitPeriod = exitPeriod
    }

    /// What taught links use today with the `balanced` preset: `TaughtRegionLink`'s allowance and hysteresis,
    /// `balanced`'s margin, evidence and exit period.
    public static let current = TaughtFrontierRule(
        enterAllowance: TaughtRegionLink.taughtEnterAllowance, hysteresis: TaughtRegionLink.boundaryOnlyHysteresis,
        enterMargin: RegionSensitivity.balanced.parameters.enterMargin,
        enterEvidence: RegionSensitivity.balanced.parameters.enterEvidence,
        exitPeriod: RegionSensitivity.balanced.parameters.exitPeriod)

    /// E.g. `a2-h5-m3.5-e30-x30`: allowance, hysteresis, margin, evidence, exit period.
    public var name: String {
        "a\(Self.text(enterAllowance))-h\(Self.text(hysteresis))-m\(Self.text(enterMargin))"
            + "-e\(Self.text(enterEvidence))-x\(Self.text(exitPeriod))"
    }

    /// The region rules of a run whose links were taught `links`: the taught levels set this way, the keys
    /// replaced in every region with an enter condition.
    public func regions(_ scenario: Scenario, links: [TeachPhase.Key: TaughtRegionLink]) -> TaughtRegions {
        var taught = TaughtRegions(
            scenario: scenario, links: links, peersTaught: false, enterAllowance: enterAllowance,
            hysteresis: hysteresis)
        for index in taught.rules.indices where taught.rules[index].enter != nil {
            taught.rules[index].enterMargin = enterMargin
            taught.rules[index].enterEvidence = enterEvidence
            taught.rules[index].exitPeriod = exitPeriod
        }
        return taught
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The product grid of these lists, in this order (allowance outermost).
    public static func grid(
        allowances: [Double], hystereses: [Double], margins: [Double], evidences: [Double], exitPeriods: [Double]
    ) -> [TaughtFrontierRule] {
        allowances.flatMap { allowance in
            hystereses.flatMap { hysteresis in
                margins.flatMap { margin in
                    evidences.flatMap { evidence in
                        exitPeriods.map {
                            TaughtFrontierRule(
                                enterAllowance: allowance, hysteresis: hysteresis, enterMargin: margin,
                                enterEvidence: evidence, exitPeriod: $0)
                        }
                    }
                }
            }
        }
    }

    /// A grid written `A:H:M:E:X`, five comma-separated lists of dB or seconds (allowance, hysteresis, margin,
    /// evidence, exit period; `simulate --taught-grid`), e.g. `2:5:3.5:30:30` for one point. Nil when malformed:
    /// not five lists, a value that is no number, a negative allowance, a hysteresis, margin, evidence or exit
    /// period not above 0.
    public static func grid(spec: String) -> [TaughtFrontierRule]? {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 5 else { return nil }
        var lists: [[Double]] = []
        for (index, part) in parts.enumerated() {
            let values = part.split(separator: ",", omittingEmptySubsequences: false)
            let numbers = values.compactMap { Double($0) }
            guard !numbers.isEmpty, numbers.count == values.count,
                numbers.allSatisfy({ $0.isFinite && (index == 0 ? $0 >= 0 : $0 > 0) })
            else { return nil }
            lists.append(numbers)
        }
        return grid(
            allowances: lists[0], hystereses: lists[1], margins: lists[2], evidences: lists[3], exitPeriods: lists[4])
    }

    /// The grid `--frontier --teach` runs, once with the taught links and once with the oracle's: allowance
    /// {0, 1, 2, 3} dB × hysteresis {5, 6, 7, 8} dB × margin {3.5, 5, 7} dB × evidence {15, 30, 60} dB·s at the
    /// `balanced` exit period (30 s), and an exit-period slice (20 s and 40 s over allowance {0, 1, 2} ×
    /// hysteresis {6, 7, 8} at margin 5, evidence 30). 162 points; about 7 minutes over the nine issue-43
    /// scenarios × 5 seeds on a release build (docs/tracking-and-regions.md, "The taught and oracle frontier").
    public static let defaultGrid =
        grid(
            allowances: [0, 1, 2, 3], hystereses: [5, 6, 7, 8], margins: [3.5, 5, 7], evidences: [15, 30, 60],
            exitPeriods: [30])
        + grid(allowances: [0, 1, 2], hystereses: [6, 7, 8], margins: [5], evidences: [30], exitPeriods: [20, 40])
}
