import BeaconModel
import BeaconRooms
import BeaconSimulation

/// `beaconbridge simulate` on multi-gateway scenarios (`"kind": "rooms"`, docs/rooms.md): the room arbiter and
/// the two peer rules on the same sightings; per run a `room_summary` line (and, for a single run without
/// `--summary-only`, every arbiter decision as a `room_change` line first; with `--events ROW` that row's decisions
/// and then the true stays as `room_truth` lines), with several runs an
/// `room_aggregate` line; the same figures as a table on stderr.
enum SimulateRooms {
    static func run(
        texts: [(path: String, text: String)], seed: UInt64?, seeds: Int, summaryOnly: Bool, frontier: Bool = false,
        trueLevels: Bool = false, gatewayLinks: GatewayLinkRadio.Variant? = nil,
        spatialBias: SpatialBiasRadio.Variant? = nil, radioModel: ScenarioRadio.Model? = nil,
        ablations: Bool = false, eventsRow: String? = nil
    ) -> Int32 {
        var scenarios: [RoomScenario] = []
        for (path, text) in texts {
            do {
                var scenario = try RoomScenario(json: text, radioModel: radioModel)
                if let seed { scenario.seed = seed }
                if let gatewayLinks { scenario.gatewayLinks = GatewayLinkRadio(gatewayLinks) }
                if let spatialBias { scenario.spatialBias = SpatialBiasRadio(spatialBias) }
                scenarios.append(scenario)
            } catch {
                Output.stderr("beaconbridge simulate: \(path): \(error)")
                return error.kind == .invalid ? ExitCode.config : ExitCode.dataError
            }
        }
        if frontier { return SimulateRoomsFrontier.run(scenarios, seeds: seeds, trueLevels: trueLevels) }
        let single = scenarios.count == 1 && seeds == 1
        var summaries: [RoomSummary] = []
        for base in scenarios {
            for offset in 0..<seeds {
                var scenario = base
                scenario.seed = base.seed &+ UInt64(offset)
                var run = RoomScenarioRun(scenario)
                run.classifierAblations = ablations
                run.eventsRow = eventsRow
                let summary = run.run { change in
                    if single, !summaryOnly { Output.stdout(json(change).serialized) }
                }
                if let eventsRow {
                    guard (summary.rules + summary.oracles).contains(where: { $0.name == eventsRow }) else {
                        Output.stderr(
                            "beaconbridge simulate: --events: no row named '\(eventsRow)' (rows: "
                                + (summary.rules + summary.oracles).map(\.name).joined(separator: ", ") + ")")
                        return ExitCode.usage
                    }
                    for person in scenario.people {
                        for stay in run.simulator.truth(of: person) { Output.stdout(truth(stay, of: person, scenario)) }
                    }
                }
                Output.stdout(
                    JSONValue.object([
                        ("type", .string("room_summary")), ("scenario", .string(scenario.name)),
                        ("seed", .string(String(scenario.seed))), ("radio", .string(scenario.radio.model.rawValue)),
                        ("sightings", .int(Int64(summary.sightings))),
                        ("rules", json(summary.rules)), ("oracles", json(summary.oracles)),
                        ("calibration", json(summary.calibration)),
                        ("training", json(summary.training)),
                    ]).serialized)
                Output.stderr(
                    "\(scenario.name) (seed \(scenario.seed), \(scenario.radio.model.rawValue) radio), \(summary.sightings) sightings:\n"
                        + text(summary))
                summaries.append(summary)
            }
        }
        if !single {
            let all = RoomSummary.merged(summaries)
            Output.stdout(
                JSONValue.object([
                    ("type", .string("room_aggregate")), ("runs", .int(Int64(summaries.count))),
                    ("scenarios", .array(scenarios.map { .string($0.name) })),
                    ("seeds_per_scenario", .int(Int64(seeds))),
                    ("radios", .array(Set(scenarios.map(\.radio.model.rawValue)).sorted().map { .string($0) })),
                    ("rules", json(all.rules)), ("oracles", json(all.oracles)),
                    ("calibration", json(all.calibration)),
                ]).serialized)
            Output.stderr(
                "all \(summaries.count) runs (\(scenarios.map(\.name).joined(separator: ", ")); \(seeds) seed(s) each):\n"
                    + text(all))
        }
        return ExitCode.ok
    }

    /// `--capture`: one capture per gateway and the ground truth (SimulateRoomsCapture).
    static func capture(
        text: (path: String, text: String), seed: UInt64?, pattern: String, radioModel: ScenarioRadio.Model? = nil
    ) -> Int32 {
        do {
            var scenario = try RoomScenario(json: text.text, radioModel: radioModel)
            if let seed { scenario.seed = seed }
            return SimulateRoomsCapture.write(scenario, pattern: pattern) ?? ExitCode.ok
        } catch {
            Output.stderr("beaconbridge simulate: \(text.path): \(error)")
            return error.kind == .invalid ? ExitCode.config : ExitCode.dataError
        }
    }

    /// One true stay as `--capture` prints it (capture times).
    static func truth(_ stay: RoomStay, of person: ScenarioBeacon, _ scenario: RoomScenario) -> String {
        JSONValue.object([
            ("type", .string("room_truth")), ("beacon_id", .string(person.beaconID)),
            ("room", .string(stay.room ?? RoomEvent.notHome)), ("start", .double(scenario.startTime + stay.start)),
            ("end", .double(scenario.startTime + stay.end)),
        ]).serialized
    }

    static func json(_ change: RoomChange) -> JSONValue {
        .object([
            ("type", .string("room_change")), ("time", .double((change.time * 1000).rounded() / 1000)),
            ("beacon_id", .string(change.beaconID)), ("from", room(change.from, had: change.hadRoom)),
            ("to", room(change.to, had: true)), ("gateway", change.gatewayID.map { .string($0) } ?? .null),
        ])
    }

    private static func room(_ room: String?, had: Bool) -> JSONValue {
        guard had else { return .null }
        return .string(room ?? "not_home")
    }

    /// The rows of `rules` or `oracles`.
    static func json(_ rules: [RoomSummary.Rule]) -> JSONValue {
        .array(
            rules.map { rule in
                .object([
                    ("name", .string(rule.name)),
                    ("wrong_room_share", rounded(rule.wrongShare, 100_000)),
                    ("confidently_wrong_share", rounded(rule.confidentlyWrongShare, 100_000)),
                    ("dark_room_seconds", rounded(rule.darkSeconds, 1000)),
                    ("dark_room_elsewhere_share", rule.darkElsewhereShare.map { rounded($0, 100_000) } ?? .null),
                    ("false_switches_per_beacon_hour", rounded(rule.falseSwitchesPerHour, 1000)),
                    ("false_switches", .int(Int64(rule.falseSwitches))),
                    ("switches", .int(Int64(rule.switches))),
                    ("beacon_hours", rounded(rule.beaconHours, 1000)),
                    ("room_changes", .int(Int64(rule.trueChanges))),
                    ("missed_room_changes", .int(Int64(rule.missed))),
                    (
                        "wrong_time_share",
                        .object([
                            ("ambiguous", rounded(rule.wrongTime.wrongAmbiguous / max(rule.judgedSeconds, 1), 100_000)),
                            ("transit", rounded(rule.wrongTime.wrongInTransit / max(rule.judgedSeconds, 1), 100_000)),
                            (
                                "catching_up",
                                rounded(rule.wrongTime.wrongCatchingUp / max(rule.judgedSeconds, 1), 100_000)
                            ),
                            ("relapse", rounded(rule.wrongTime.wrongRelapse / max(rule.judgedSeconds, 1), 100_000)),
                            (
                                "oracle_mean_wrong_too",
                                rounded(rule.wrongTime.wrongMeanFloor / max(rule.judgedSeconds, 1), 100_000)
                            ),
                            (
                                "oracle_fixed_wrong_too",
                                rounded(rule.wrongTime.wrongFixedFloor / max(rule.judgedSeconds, 1), 100_000)
                            ),
                        ])
                    ),
                    (
                        "room_change_latency_s",
                        .object([
                            ("p50", rule.latencyP50.map { rounded($0, 1000) } ?? .null),
                            ("p95", rule.latencyP95.map { rounded($0, 1000) } ?? .null),
                            ("max", rule.latencies.max().map { rounded($0, 1000) } ?? .null),
                        ])
                    ),
                    (
                        "beacons",
                        .array(
                            rule.beacons.map { beacon in
                                .object([
                                    ("beacon_id", .string(beacon.beaconID)),
                                    (
                                        "wrong_room_share",
                                        rounded(
                                            beacon.judgedSeconds > 0 ? beacon.wrongSeconds / beacon.judgedSeconds : 0,
                                            100_000)
                                    ),
                                    ("false_switches", .int(Int64(beacon.falseSwitches))),
                                ])
                            })
                    ),
                ])
            })
    }

    /// Self-calibration's figures (docs/rooms.md, "Self-calibration"): per run, or pooled over runs (time to
    /// converge p50/max over runs, errors as RMS over every gateway of every run).
    static func json(_ runs: [RoomCalibrationRun]) -> JSONValue {
        let figures = CalibrationFigures(runs)
        var members: [(String, JSONValue)] = [
            ("runs", .int(Int64(runs.count))),
            ("converge_s_p50", figures.convergeP50.map { rounded($0, 10) } ?? .null),
            ("converge_s_max", figures.convergeMax.map { rounded($0, 10) } ?? .null),
            ("never_converged", .int(Int64(figures.neverConverged))),
            ("wander_rms_db", rounded(figures.wander, 100)),
            ("offset_error_rms_db", rounded(figures.errorRMS, 100)),
            ("offset_error_max_db", rounded(figures.errorMax, 100)),
            ("uncalibrated_error_rms_db", rounded(figures.uncalibratedRMS, 100)),
        ]
        if runs.count == 1, let run = runs.first {
            members.append(
                (
                    "gateways",
                    .array(
                        run.gateways.map {
                            .object([
                                ("id", .string($0.id)), ("truth_db", rounded($0.truth, 100)),
                                ("estimate_db", rounded($0.estimate, 100)), ("confidence", rounded($0.confidence, 100)),
                            ])
                        })
                ))
        }
        return .object(members)
    }

    struct CalibrationFigures {
        var convergeP50: Double?
        var convergeMax: Double?
        var neverConverged = 0
        var errorRMS = 0.0
        var errorMax = 0.0
        var uncalibratedRMS = 0.0
        var wander = 0.0

        init(_ runs: [RoomCalibrationRun]) {
            wander = (runs.reduce(0) { $0 + $1.wander * $1.wander } / Double(max(runs.count, 1))).squareRoot()
            let times = runs.compactMap(\.convergeTime)
            neverConverged = runs.count - times.count
            convergeP50 = SimulationSummary.percentile(times, 0.5)
            convergeMax = times.max()
            let errors = runs.flatMap { $0.gateways.map { $0.estimate - $0.truth } }
            let truths = runs.flatMap { $0.gateways.map(\.truth) }
            errorRMS = (errors.reduce(0) { $0 + $1 * $1 } / Double(max(errors.count, 1))).squareRoot()
            errorMax = errors.map { abs($0) }.max() ?? 0
            uncalibratedRMS = (truths.reduce(0) { $0 + $1 * $1 } / Double(max(truths.count, 1))).squareRoot()
        }
    }

    static func text(_ summary: RoomSummary) -> String {
        // The dark-room column only where some beacon's room was dark (a scenario with outages).
        let dark = (summary.rules + summary.oracles).contains { $0.darkSeconds > 0 }
        func row(_ rule: RoomSummary.Rule) -> String {
            "  " + TableText.cell(rule.name, 20) + TableText.cell(TableText.rounded(rule.wrongShare * 100, 100), 13)
                + TableText.cell(TableText.rounded(rule.confidentlyWrongShare * 100, 100), 14)
                + (dark ? TableText.cell(TableText.rounded(rule.darkElsewhereShare.map { $0 * 100 }, 100), 17) : "")
                + TableText.cell(TableText.rounded(rule.falseSwitchesPerHour, 100), 10)
                + TableText.cell(String(rule.trueChanges), 8)
                + TableText.cell(String(rule.missed), 7)
                + "\(TableText.rounded(rule.latencyP50))/\(TableText.rounded(rule.latencyP95))/\(TableText.rounded(rule.latencies.max()))"
        }
        var lines = [
            "  " + TableText.cell("rule", 20) + TableText.cell("wrong room %", 13) + TableText.cell("conf. wrong %", 14)
                + (dark ? TableText.cell("dark elsewhere %", 17) : "") + TableText.cell("false/b-h", 10)
                + TableText.cell("changes", 8)
                + TableText.cell("missed", 7) + "latency p50/p95/max s"
        ]
        lines += summary.rules.map(row)
        if !summary.calibration.isEmpty {
            let figures = CalibrationFigures(summary.calibration)
            lines.append(
                "  self-calibration: converged (within \(TableText.rounded(RoomCalibrationRun.convergedWithin)) dB of its "
                    + "settled estimate) after p50 \(TableText.rounded(figures.convergeP50)) s, max "
                    + "\(TableText.rounded(figures.convergeMax)) s (\(figures.neverConverged) never), then wanders "
                    + "\(TableText.rounded(figures.wander, 100)) dB RMS; last offset error against the "
                    + "truth RMS \(TableText.rounded(figures.errorRMS, 100)) dB, max \(TableText.rounded(figures.errorMax, 100)) "
                    + "dB (no offsets: RMS \(TableText.rounded(figures.uncalibratedRMS, 100)) dB)")
        }
        lines += trainingLines(summary.training)
        if !summary.oracles.isEmpty {
            lines.append("  oracles (analysis, not deployable: they read the simulator's true link levels):")
            lines += summary.oracles.map(row)
        }
        // Where the wrong time falls, in % of the judged time (docs/rooms.md).
        lines.append(
            "  " + TableText.cell("wrong time in %:", 20) + TableText.cell("ambiguous", 10)
                + TableText.cell("transit", 8) + TableText.cell("catch-up", 9)
                + TableText.cell("relapse", 8) + "oracle-mean / -fixed wrong too   (judged time at ambiguous spots: "
                + TableText.rounded(
                    share(summary.rules.first?.wrongTime.ambiguousSeconds ?? 0, summary.rules.first), 100)
                + " %)")
        for rule in summary.rules + summary.oracles {
            let wrong = rule.wrongTime
            lines.append(
                "  " + TableText.cell(rule.name, 20)
                    + TableText.cell(TableText.rounded(share(wrong.wrongAmbiguous, rule), 100), 10)
                    + TableText.cell(TableText.rounded(share(wrong.wrongInTransit, rule), 100), 8)
                    + TableText.cell(TableText.rounded(share(wrong.wrongCatchingUp, rule), 100), 9)
                    + TableText.cell(TableText.rounded(share(wrong.wrongRelapse, rule), 100), 8)
                    + TableText.rounded(share(wrong.wrongMeanFloor, rule), 100) + " / "
                    + TableText.rounded(share(wrong.wrongFixedFloor, rule), 100))
        }
        return lines.joined(separator: "\n")
    }

    /// The training phase's quality per room (docs/rooms.md, "Training (issue 29, session 19)"): over the runs,
    /// per scenario and room, the mean quality figure, the fewest gateways that heard the trainer, the mean
    /// reports and the least distance of a trained spot to a scored stop.
    static func trainingLines(_ reports: [RoomTrainingRun.Report]) -> [String] {
        guard !reports.isEmpty else { return [] }
        var order: [String] = []
        var groups: [String: [RoomTrainingRun.Report]] = [:]
        for report in reports {
            let key = report.scenario + " / " + report.room
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(report)
        }
        var lines = [
            "  training (before the scored stream; \(reports.count) room walks): "
                + TableText.cell("scenario / room", 28) + TableText.cell("quality", 8) + TableText.cell("gateways", 9)
                + TableText.cell("reports", 8) + "nearest scored stop m"
        ]
        for key in order {
            let group = groups[key] ?? []
            let count = Double(max(group.count, 1))
            let nearest = group.map(\.nearestStop).min() ?? .infinity
            lines.append(
                "    " + TableText.cell(key, 28)
                    + TableText.cell(
                        TableText.rounded(group.reduce(0) { $0 + $1.quality } / count, 100), 8)
                    + TableText.cell(String(group.map(\.gatewaysHeard).min() ?? 0), 9)
                    + TableText.cell(String(Int((Double(group.reduce(0) { $0 + $1.samples }) / count).rounded())), 8)
                    + (nearest.isFinite ? TableText.rounded(nearest, 100) : "none"))
        }
        return lines
    }

    static func json(_ reports: [RoomTrainingRun.Report]) -> JSONValue {
        .array(
            reports.map { report in
                .object([
                    ("scenario", .string(report.scenario)), ("room", .string(report.room)),
                    ("quality", rounded(report.quality, 1000)), ("gateways_heard", .int(Int64(report.gatewaysHeard))),
                    ("reports", .int(Int64(report.samples))),
                    ("nearest_stop_m", rounded(report.nearestStop, 100)),
                ])
            })
    }

    private static func share(_ seconds: Double, _ rule: RoomSummary.Rule?) -> Double? {
        guard let rule, rule.judgedSeconds > 0 else { return nil }
        return seconds / rule.judgedSeconds * 100
    }

    private static func rounded(_ value: Double, _ scale: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        return .double((value * scale).rounded() / scale)
    }
}
