/// `sensitivity: fast | balanced | steady` (YAML, under `tracking:` for every region and per region): a named
/// set of a region rule's timing parameters, so a user picks the trade between latency and false transitions
/// without reading the rule. Keys a region sets itself override its preset's. The figures of each preset on
/// the simulator's measured radio are in docs/tracking-and-regions.md ("Sensitivity presets").
public enum RegionSensitivity: String, Sendable, Equatable, CaseIterable {
    case fast, balanced, steady

    /// The parameter set of a preset (`RegionRule` documents each key).
    public struct Parameters: Sendable, Equatable {
        public var enterEvidence: Double
        public var enterMargin: Double
        public var fastEnterEvidence: Double
        public var fastEnterMargin: Double
        public var minDwell: Double
        public var exitPeriod: Double
        public var exitEvidence: Double
        public var dropoutGrace: Double
    }

    public var parameters: Parameters {
        switch self {
        case .fast:
            Parameters(
                enterEvidence: 15, enterMargin: 2, fastEnterEvidence: 6, fastEnterMargin: 4, minDwell: 1,
                exitPeriod: 20, exitEvidence: 20, dropoutGrace: 60)
        case .balanced:
            Parameters(
                enterEvidence: 30, enterMargin: 3.5, fastEnterEvidence: 10, fastEnterMargin: 6, minDwell: 1,
                exitPeriod: 30, exitEvidence: 20, dropoutGrace: 60)
        case .steady:
            Parameters(
                enterEvidence: 60, enterMargin: 3.5, fastEnterEvidence: 0, fastEnterMargin: 8, minDwell: 2,
                exitPeriod: 45, exitEvidence: 30, dropoutGrace: 90)
        }
    }
}

extension RegionRule {
    /// Sets every parameter of the preset (and `sensitivity`); keys set afterwards override it.
    public mutating func apply(_ preset: RegionSensitivity) {
        let p = preset.parameters
        sensitivity = preset
        enterEvidence = p.enterEvidence
        enterMargin = p.enterMargin
        fastEnterEvidence = p.fastEnterEvidence
        fastEnterMargin = p.fastEnterMargin
        minDwell = p.minDwell
        exitPeriod = p.exitPeriod
        exitEvidence = p.exitEvidence
        dropoutGrace = p.dropoutGrace
    }
}
