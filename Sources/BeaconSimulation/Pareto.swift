import BeaconModel

/// Pareto dominance, the order of the frontiers of `simulate --frontier` (single-gateway and rooms).
enum Pareto {
    /// Whether `mine` dominates `theirs`, two rows of figures where lower is better: at least as good on every
    /// figure and better on one.
    static func dominates(_ mine: [Double], _ theirs: [Double]) -> Bool {
        zip(mine, theirs).allSatisfy { $0 <= $1 } && zip(mine, theirs).contains { $0 < $1 }
    }
}
