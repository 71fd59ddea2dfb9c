import BeaconModel
import BeaconSimulation

/// `simulate --frontier`: runs every scenario and seed through `SimulationFrontier` and prints one `frontier`
/// JSON line per rule on stdout, then a `frontier_verdict` line, and the table on stderr (docs/scenarios.md).
/// With a teach also the taught and oracle rows and a `taught_verdict` line (`TaughtFrontierVerdict`).
enum SimulateFrontier {
    static func run(
        _ scenarios: [Scenario], seeds: Int, teach: TeachPhase? = nil,
        taughtGrid: [TaughtFrontierRule] = TaughtFrontierRule.defaultGrid
    ) -> Int32 {
        var frontier = SimulationFrontier(teach: teach, taughtGrid: taughtGrid)
        for base in scenarios {
            for offset in 0..<seeds {
                var scenario = base
                scenario.seed = base.seed &+ UInt64(offset)
                frontier.add(scenario)
            }
        }
        let points = frontier.points().sorted {
            ($0.falsePerBeaconHour, $0.enterP95) < ($1.falsePerBeaconHour, $1.enterP95)
        }
        let exitBound = frontier.exitPeriod + 10
        let bestBaseline = points.filter { $0.family == .baseline }.map(\.falsePerBeaconHour).min() ?? 0
        for point in points {
            Output.stdout(
                JSONValue.object([
                    ("type", .string("frontier")), ("name", .string(point.name)),
                    ("family", .string(point.family.rawValue)),
                    ("false_transitions_per_beacon_hour", TableText.json(point.falsePerBeaconHour, 1000)),
                    ("false_exits_during_stays", .int(Int64(point.falseExitsDuringStays))),
                    ("missed_transitions", .int(Int64(point.missed))),
                    ("right_state_fraction", TableText.json(point.rightFraction, 10_000)),
                    ("enter_p95_1hz_s", TableText.json(point.enterP95, 10)),
                    ("enter_p95_5hz_s", TableText.json(point.enterP95Fast, 10)),
                    ("exit_p95_s", TableText.json(point.exitP95, 10)),
                    ("felt_enter_p95_1hz_s", TableText.json(point.feltEnterP95, 10)),
                    ("felt_enter_p95_5hz_s", TableText.json(point.feltEnterP95Fast, 10)),
                    ("felt_exit_p95_s", TableText.json(point.feltExitP95, 10)),
                    ("made_felt_enter_p95_1hz_s", optional(point.madeFeltEnterP95)),
                    ("made_felt_enter_p95_5hz_s", optional(point.madeFeltEnterP95Fast)),
                    ("made_felt_exit_p95_s", optional(point.madeFeltExitP95)),
                    ("felt_missed_enters_1hz", .int(Int64(point.feltMissedEnters))),
                    ("felt_missed_enters_5hz", .int(Int64(point.feltMissedEntersFast))),
                    ("felt_missed_exits", .int(Int64(point.feltMissedExits))), ("pareto", .bool(point.pareto)),
                    ("meets_latency_goals", .bool(point.meetsLatencyGoals(exitBound: exitBound))),
                ]).serialized)
        }
        let fastEnough = points.filter { $0.meetsLatencyGoals(exitBound: exitBound) }
        let best = fastEnough.min { $0.falsePerBeaconHour < $1.falsePerBeaconHour }
        let goal = bestBaseline / 3
        Output.stdout(
            JSONValue.object([
                ("type", .string("frontier_verdict")), ("runs", .int(Int64(scenarios.count * seeds))),
                ("best_baseline_false_per_beacon_hour", TableText.json(bestBaseline, 1000)),
                ("false_goal_per_beacon_hour", TableText.json(goal, 1000)),
                ("points_meeting_latency_goals", .int(Int64(fastEnough.count))),
                ("lowest_false_meeting_latency_goals", best.map { .string($0.name) } ?? .null),
                ("lowest_false_per_beacon_hour", best.map { TableText.json($0.falsePerBeaconHour, 1000) } ?? .null),
                ("goals_met_together", .bool(best.map { $0.falsePerBeaconHour <= goal } ?? false)),
            ]).serialized)
        let verdict = teach.map { _ in TaughtFrontierVerdict(points: points, falseGoal: goal, exitBound: exitBound) }
        if let verdict { Output.stdout(verdictJSON(verdict).serialized) }
        var lines = [
            "frontier over \(scenarios.count * seeds) runs (\(scenarios.first?.radio.model.rawValue ?? "-") radio), \(points.count) rules "
                + "(* = Pareto on false/b-h and the felt enter p95s and exit p95; "
                + "missed transitions count as infinitely late; goals: false/b-h <= \(TableText.roundedOrMissed(goal, 100)) (a third of the "
                + "best baseline's \(TableText.roundedOrMissed(bestBaseline, 100))), felt enter p95 < 10 s at >= 1 Hz and < 5 s at >= 5 Hz, "
                + "felt exit p95 <= \(TableText.roundedOrMissed(exitBound, 10)) s; old: from the true crossing, every transition):",
            "  " + TableText.cell("rule", 30) + TableText.cell("false/b-h", 10) + TableText.cell("false exits", 12)
                + TableText.cell("missed", 7)
                + TableText.cell("right %", 8)
                + TableText.cell("felt enter p95 ≥1/≥5", 22) + TableText.cell("felt exit", 10)
                + TableText.cell("made felt enter p95 ≥1/≥5 (missed)", 36)
                + TableText.cell("made felt exit (missed)", 24)
                + TableText.cell("old enter p95 ≥1/≥5", 20) + "old exit p95",
        ]
        for point in points {
            lines.append(
                (point.pareto ? "* " : "  ") + TableText.cell(point.name, 30)
                    + TableText.cell(TableText.roundedOrMissed(point.falsePerBeaconHour, 100), 10)
                    + TableText.cell(String(point.falseExitsDuringStays), 12) + TableText.cell(String(point.missed), 7)
                    + TableText.cell(TableText.roundedOrMissed(point.rightFraction * 100, 100), 8)
                    + TableText.cell(
                        "\(TableText.roundedOrMissed(point.feltEnterP95, 10))/\(TableText.roundedOrMissed(point.feltEnterP95Fast, 10))",
                        22)
                    + TableText.cell(TableText.roundedOrMissed(point.feltExitP95, 10), 10)
                    + TableText.cell(
                        "\(TableText.rounded(point.madeFeltEnterP95))/\(TableText.rounded(point.madeFeltEnterP95Fast)) "
                            + "(\(point.feltMissedEnters)/\(point.feltMissedEntersFast))", 36)
                    + TableText.cell(
                        "\(TableText.rounded(point.madeFeltExitP95)) (\(point.feltMissedExits))", 24)
                    + TableText.cell(
                        "\(TableText.roundedOrMissed(point.enterP95, 10))/\(TableText.roundedOrMissed(point.enterP95Fast, 10))",
                        20)
                    + TableText.roundedOrMissed(point.exitP95, 10))
        }
        if let best {
            lines.append(
                "\(fastEnough.count) rule(s) meet the three latency goals; the one with the fewest false transitions is \(best.name) "
                    + "with \(TableText.roundedOrMissed(best.falsePerBeaconHour, 100)) per beacon-hour (goal \(TableText.roundedOrMissed(goal, 100))): "
                    + (best.falsePerBeaconHour <= goal
                        ? "the goals are met together" : "the goals are NOT met together"))
        } else {
            lines.append("no rule of the family meets the three latency goals")
        }
        if let verdict { lines += verdictText(verdict, goal: goal, exitBound: exitBound) }
        Output.stderr(lines.joined(separator: "\n"))
        return ExitCode.ok
    }

    private static func optional(_ value: Double?) -> JSONValue { value.map { TableText.json($0, 10) } ?? .null }

    private static func verdictJSON(_ verdict: TaughtFrontierVerdict) -> JSONValue {
        .object([
            ("type", .string("taught_verdict")),
            ("oracle_fastest_1hz", verdict.oracleFastest.map { .string($0.name) } ?? .null),
            ("oracle_fastest_1hz_enter_p95_s", optional(verdict.oracleFastest?.madeFeltEnterP95)),
            ("oracle_fastest_5hz", verdict.oracleFastestFast.map { .string($0.name) } ?? .null),
            ("oracle_fastest_5hz_enter_p95_s", optional(verdict.oracleFastestFast?.madeFeltEnterP95Fast)),
            (
                "candidates",
                .array(
                    verdict.candidates.map { candidate in
                        .object([
                            ("name", .string(candidate.point.name)),
                            (
                                "false_transitions_per_beacon_hour",
                                TableText.json(candidate.point.falsePerBeaconHour, 1000)
                            ),
                            ("oracle_enter_p95_1hz_s", optional(candidate.oracleEnterP95)),
                            ("oracle_enter_p95_5hz_s", optional(candidate.oracleEnterP95Fast)),
                            ("within_ratio", .bool(candidate.withinRatio)),
                        ])
                    })
            ),
        ])
    }

    private static func verdictText(_ verdict: TaughtFrontierVerdict, goal: Double, exitBound: Double) -> [String] {
        let goals =
            "false/b-h <= \(TableText.roundedOrMissed(goal, 100)), made felt exit p95 <= \(TableText.roundedOrMissed(exitBound, 10)) s"
        var lines = ["taught and oracle rows (\(goals); felt latencies over the felt transitions made):"]
        if let slow = verdict.oracleFastest, let fast = verdict.oracleFastestFast {
            lines.append(
                "  the oracle's least felt enter p95 within those goals: \(TableText.rounded(slow.madeFeltEnterP95)) s at >= 1 Hz "
                    + "(\(slow.name)), \(TableText.rounded(fast.madeFeltEnterP95Fast)) s at >= 5 Hz (\(fast.name))")
        } else {
            lines.append("  no oracle row is within those goals")
        }
        if verdict.candidates.isEmpty { lines.append("  no taught row is within those goals") }
        for candidate in verdict.candidates {
            lines.append(
                "  \(candidate.withinRatio ? "WITHIN" : "not within") 1.5x: \(candidate.point.name) "
                    + "\(TableText.roundedOrMissed(candidate.point.falsePerBeaconHour, 100)) false/b-h, felt enter "
                    + "\(TableText.rounded(candidate.point.madeFeltEnterP95))/\(TableText.rounded(candidate.point.madeFeltEnterP95Fast)) s "
                    + "against the oracle's \(TableText.rounded(candidate.oracleEnterP95))/\(TableText.rounded(candidate.oracleEnterP95Fast)) s "
                    + "at no more false transitions")
        }
        return lines
    }
}
