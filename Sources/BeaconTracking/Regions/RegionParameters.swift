/// The numbers of one region rule that the per-report path needs, as plain data (no strings, no arrays), so
/// reading them costs no reference counting.
struct RegionParameters: Sendable {
    package var enter: RegionCondition?
    package var exit: RegionCondition
    package var enterEvidence: Double
    var minDwell: Double
    package var exitPeriod: Double
    package var enterMargin: Float
    /// The margin while the pair is `unknown` (`enterMargin` × `RegionEvaluator.unknownMarginShare`).
    var unknownMargin: Float
    var exitEvidence: Float
    var dropoutGrace: Double
    /// The fast path (issue 30): strong evidence needed (0: off) and the margin it counts above.
    var fastEnterEvidence: Float
    var fastEnterMargin: Float
    /// The region's own filter, nil to judge raw reports.
    package var filter: FilterSettings?

    package init(_ rule: RegionRule) {
        enter = rule.enter
        exit = rule.effectiveExit ?? .rssi(-127)
        enterEvidence = rule.enterEvidence
        minDwell = rule.minDwell
        exitPeriod = rule.exitPeriod
        enterMargin = Float(rule.enterMargin)
        unknownMargin = Float(rule.enterMargin) * RegionEvaluator.unknownMarginShare
        exitEvidence = Float(rule.exitEvidence)
        dropoutGrace = rule.dropoutGrace
        fastEnterEvidence = Float(rule.fastEnterEvidence)
        fastEnterMargin = Float(rule.fastEnterMargin)
        filter = rule.filter
    }
}
