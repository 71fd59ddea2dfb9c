import BeaconModel
import BeaconSimulation

/// `simulate --frontier` on rooms scenarios: every scenario and seed through `RoomFrontier`; one `room_frontier`
/// JSON line per row on stdout, then a `room_frontier_verdict` line, and the table on stderr (docs/rooms.md,
/// "The rooms frontier").
enum SimulateRoomsFrontier {
    static func run(_ scenarios: [RoomScenario], seeds: Int, trueLevels: Bool) -> Int32 {
        var frontier = RoomFrontier(trueLevels: trueLevels)
        for base in scenarios {
            for offset in 0..<seeds {
                var scenario = base
                scenario.seed = base.seed &+ UInt64(offset)
                frontier.add(scenario)
            }
        }
        let points = frontier.points()
        let rules = points.filter { $0.family != .oracle }
        let arbiter = points.first { $0.family == .arbiter }
        let baselines = points.filter { $0.family == .baseline }
        func quiet(_ point: RoomFrontier.Point) -> Bool { point.falsePerBeaconHour < 0.2 && point.latencyP95 < 15 }
        let quietAndFast = rules.filter(quiet)
        let right = rules.filter { $0.wrongShare < 0.03 }
        let allGoals = rules.filter { quiet($0) && $0.wrongShare < 0.03 }
        let best = rules.min { $0.wrongShare < $1.wrongShare }
        let beatDefault = arbiter.map { reference in rules.filter { $0.beatsOnEveryFigure(reference) } } ?? []
        let beatBaselines = rules.filter { point in
            !baselines.isEmpty && baselines.allSatisfy { point.beatsOnEveryFigure($0) }
        }
        for point in points {
            Output.stdout(
                JSONValue.object([
                    ("type", .string("room_frontier")), ("name", .string(point.name)),
                    ("family", .string(point.family.rawValue)),
                    ("wrong_room_share", TableText.json(point.wrongShare, 100_000)),
                    ("false_switches_per_beacon_hour", TableText.json(point.falsePerBeaconHour, 1000)),
                    ("room_changes", .int(Int64(point.trueChanges))),
                    ("missed_room_changes", .int(Int64(point.missed))),
                    ("latency_p50_s", TableText.json(point.latencyP50, 10)),
                    ("latency_p95_s", TableText.json(point.latencyP95, 10)),
                    ("pareto", .bool(point.pareto)),
                    ("beats_default_on_every_figure", .bool(arbiter.map { point.beatsOnEveryFigure($0) } ?? false)),
                ]).serialized)
        }
        let oracles = points.filter { $0.family == .oracle && !$0.name.hasSuffix("@true-levels") }
        let fed = points.filter { $0.name.hasSuffix("@true-levels") }
        let fedQuiet = fed.filter(quiet)
        let fedRight = fed.filter { $0.wrongShare < 0.03 }
        let fedBest = fed.min { $0.wrongShare < $1.wrongShare }
        Output.stdout(
            JSONValue.object([
                ("type", .string("room_frontier_verdict")), ("runs", .int(Int64(frontier.runCount))),
                ("rules", .int(Int64(rules.count))),
                ("pareto_rules", .array(rules.filter(\.pareto).map { .string($0.name) })),
                ("rules_meeting_false_and_p95_goals", .array(quietAndFast.map { .string($0.name) })),
                ("rules_meeting_wrong_goal", .array(right.map { .string($0.name) })),
                ("rules_meeting_every_goal", .array(allGoals.map { .string($0.name) })),
                ("best_wrong_room_rule", best.map { .string($0.name) } ?? .null),
                ("best_wrong_room_share", best.map { TableText.json($0.wrongShare, 100_000) } ?? .null),
                (
                    "oracle_wrong_room_share",
                    .object(oracles.map { ($0.name, TableText.json($0.wrongShare, 100_000)) })
                ),
                ("rules_beating_default_on_every_figure", .array(beatDefault.map { .string($0.name) })),
                ("rules_beating_both_baselines_on_every_figure", .array(beatBaselines.map { .string($0.name) })),
                ("true_levels_meeting_false_and_p95_goals", .array(fedQuiet.map { .string($0.name) })),
                ("true_levels_meeting_wrong_goal", .array(fedRight.map { .string($0.name) })),
                ("true_levels_best_wrong_room_share", fedBest.map { TableText.json($0.wrongShare, 100_000) } ?? .null),
            ]).serialized)
        var lines = [
            "rooms frontier over \(frontier.runCount) runs, \(rules.count) rules (* = Pareto on wrong %, false/b-h, "
                + "p95; missed room changes count as infinitely late in p50/p95; goals: wrong < 3 %, false/b-h < 0.2, "
                + "p95 < 15 s):",
            "  " + TableText.cell("rule", 34) + TableText.cell("wrong %", 9) + TableText.cell("false/b-h", 10)
                + TableText.cell("missed", 7)
                + "latency p50/p95 s",
        ]
        for point in points where (point.family != .variant || point.pareto) && !point.name.hasSuffix("@true-levels") {
            lines.append(
                (point.pareto ? "* " : "  ") + TableText.cell(point.name, 34)
                    + TableText.cell(TableText.roundedOrMissed(point.wrongShare * 100, 100), 9)
                    + TableText.cell(TableText.roundedOrMissed(point.falsePerBeaconHour, 100), 10)
                    + TableText.cell(String(point.missed), 7)
                    + "\(TableText.roundedOrMissed(point.latencyP50, 10))/\(TableText.roundedOrMissed(point.latencyP95, 10))"
            )
        }
        lines.append(
            "  (\(rules.filter { $0.family == .variant && !$0.pareto }.count) variants off the frontier not listed; "
                + "every row is on stdout)")
        lines.append(
            "false/b-h < 0.2 and p95 < 15 s together: \(names(quietAndFast)); wrong < 3 %: \(names(right)); "
                + "every goal: \(names(allGoals))")
        if let best {
            lines.append(
                "lowest wrong %: \(best.name) \(TableText.roundedOrMissed(best.wrongShare * 100, 100)) % (oracles: "
                    + oracles.map { "\($0.name) \(TableText.roundedOrMissed($0.wrongShare * 100, 100)) %" }.joined(
                        separator: ", ") + ")")
        }
        lines.append(
            "ahead of the default on every figure: \(names(beatDefault)); ahead of both baselines on every figure: "
                + names(beatBaselines))
        if let fedBest {
            lines.append(
                "fed the true levels (\(fed.count) variants): false/b-h < 0.2 and p95 < 15 s together: \(names(fedQuiet)); "
                    + "wrong < 3 %: \(names(fedRight)); lowest wrong %: \(fedBest.name) "
                    + "\(TableText.roundedOrMissed(fedBest.wrongShare * 100, 100)) %, lowest false/b-h "
                    + TableText.roundedOrMissed(fed.map(\.falsePerBeaconHour).min() ?? .infinity, 100) + ", lowest p95 "
                    + TableText.roundedOrMissed(fed.map(\.latencyP95).min() ?? .infinity, 10) + " s")
        }
        Output.stderr(lines.joined(separator: "\n"))
        return ExitCode.ok
    }

    private static func names(_ points: [RoomFrontier.Point]) -> String {
        points.isEmpty ? "none" : points.map(\.name).joined(separator: ", ")
    }
}
