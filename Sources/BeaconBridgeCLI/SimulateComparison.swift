import BeaconModel
import BeaconSimulation

/// The side-by-side comparison `simulate` prints: BeaconBridge's region engine and each peer baseline on the
/// same report stream (docs/scenarios.md, "Ground truth and the summary").
enum SimulateComparison {
    static let engineName = "beaconbridge"

    static func rows(_ summary: SimulationSummary) -> [(name: String, scores: any PairScores)] {
        [(engineName, summary as any PairScores)] + summary.baselines.map { ($0.name, $0 as any PairScores) }
    }

    static func json(_ summary: SimulationSummary) -> JSONValue {
        .array(
            rows(summary).map { row in
                let scores = row.scores
                return .object([
                    ("name", .string(row.name)),
                    ("false_transitions_per_beacon_hour", rounded(scores.falseTransitionsPerBeaconHour, 1000)),
                    ("false_transitions", .int(Int64(scores.falseTransitions))),
                    ("false_exits_during_stays", .int(Int64(scores.falseExitsDuringStays))),
                    ("missed_transitions", .int(Int64(scores.missed))),
                    ("right_state_fraction", rounded(scores.rightFraction, 10_000)),
                    ("enter_latency_s", latencies(scores.enterLatencies)),
                    ("enter_latency_1hz_s", latencies(scores.enterLatencies(atLeast: 1))),
                    ("enter_latency_5hz_s", latencies(scores.enterLatencies(atLeast: 5))),
                    ("exit_latency_s", latencies(scores.exitLatencies)),
                    ("felt_enter_latency_1hz_s", latencies(scores.feltEnterLatencies(atLeast: 1))),
                    ("felt_enter_latency_5hz_s", latencies(scores.feltEnterLatencies(atLeast: 5))),
                    ("felt_missed_enters_1hz", .int(Int64(scores.feltMissedEnters(atLeast: 1)))),
                    ("felt_exit_latency_s", latencies(scores.feltExitLatencies)),
                    ("felt_missed_exits", .int(Int64(scores.feltMissedExits))),
                ])
            })
    }

    static func latencies(_ values: [Double]) -> JSONValue {
        .object([
            ("count", .int(Int64(values.count))),
            ("p50", SimulationSummary.percentile(values, 0.5).map { rounded($0, 1000) } ?? .null),
            ("p95", SimulationSummary.percentile(values, 0.95).map { rounded($0, 1000) } ?? .null),
            ("max", values.max().map { rounded($0, 1000) } ?? .null),
        ])
    }

    /// A text table, one line per detector.
    static func text(_ summary: SimulationSummary) -> String {
        func triple(_ values: [Double]) -> String {
            "\(TableText.rounded(SimulationSummary.percentile(values, 0.5)))/\(TableText.rounded(SimulationSummary.percentile(values, 0.95)))/\(TableText.rounded(values.max()))"
        }
        var lines = [
            "  " + TableText.cell("detector", 27) + TableText.cell("false/b-h", 10) + TableText.cell("false exits", 12)
                + TableText.cell("missed", 7)
                + TableText.cell("right %", 8) + TableText.cell("enter p50/p95/max s", 21)
                + TableText.cell("p95 ≥1/≥5 Hz", 13)
                + TableText.cell("exit p50/p95/max s", 20)
                + TableText.cell("felt enter p95 ≥1/≥5 Hz (missed)", 33) + "felt exit p95 (missed)"
        ]
        for row in rows(summary) {
            let scores = row.scores
            lines.append(
                "  " + TableText.cell(row.name, 27)
                    + TableText.cell(TableText.rounded(scores.falseTransitionsPerBeaconHour, 100), 10)
                    + TableText.cell(String(scores.falseExitsDuringStays), 12)
                    + TableText.cell(String(scores.missed), 7)
                    + TableText.cell(TableText.rounded(scores.rightFraction * 100, 100), 8)
                    + TableText.cell(triple(scores.enterLatencies), 21)
                    + TableText.cell(
                        "\(TableText.rounded(SimulationSummary.percentile(scores.enterLatencies(atLeast: 1), 0.95)))/"
                            + TableText.rounded(SimulationSummary.percentile(scores.enterLatencies(atLeast: 5), 0.95)),
                        13)
                    + TableText.cell(triple(scores.exitLatencies), 20)
                    + TableText.cell(
                        "\(TableText.rounded(SimulationSummary.percentile(scores.feltEnterLatencies(atLeast: 1), 0.95)))/"
                            + "\(TableText.rounded(SimulationSummary.percentile(scores.feltEnterLatencies(atLeast: 5), 0.95))) "
                            + "(\(scores.feltMissedEnters(atLeast: 1)))", 33)
                    + "\(TableText.rounded(SimulationSummary.percentile(scores.feltExitLatencies, 0.95))) "
                    + "(\(scores.feltMissedExits))")
        }
        return lines.joined(separator: "\n")
    }

    private static func rounded(_ value: Double, _ scale: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        return .double((value * scale).rounded() / scale)
    }
}
