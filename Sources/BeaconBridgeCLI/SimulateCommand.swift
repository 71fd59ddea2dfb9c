import BeaconModel
import BeaconSimulation
import BeaconTracking

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge simulate --scenario FILE [--seed N] [--seeds K] [--radio MODEL] [--summary-only] [--capture OUT]`:
/// runs a scripted
/// scenario through the tracker and region engine (and the peer baselines beside it); prints every event as one
/// JSON line on stdout, then a `summary` line, and the summary as text on stderr. With several scenarios or
/// seeds: one `summary` line per run (no events), then an `aggregate` line over all runs.
/// Exit 0; 64 usage; 66 unreadable file; 65 malformed scenario; 78 invalid settings.
enum SimulateCommand {
    static let usage = """
        Usage: beaconbridge simulate --scenario FILE... [--seed N] [--seeds K] [--radio MODEL] [--sensitivity P]
                                     [--summary-only] [--capture OUT] [--frontier [--true-levels]] [--ablations]
                                     [--events ROW]
                                     [--gateway-links assumed|pessimistic] [--spatial-bias measured|off]
                                     [--teach | --teach-seconds N] [--teach-turning] [--taught-grid A:H:M:E:X]
                                     [--teach-retries N] [--teach-check C] [--teach-errors]
          --scenario FILE   scenario (JSON, see docs/scenarios.md); repeat for several
          --seed N          override the scenario's seed (0...2^64-1)
          --seeds K         run K seeds (the seed, seed+1, ...) and print the aggregate (1...1000)
          --radio MODEL     run every scenario on this radio instead of its own: measured (the default of
                            files that name none, rooms files included), pessimistic (the 5 s model before
                            issue 30) or independent (region scenarios only; docs/scenarios.md, "The radio
                            model")
          --sensitivity P   run every region with this preset (fast, balanced, steady) instead of its own
                            timing keys (docs/tracking-and-regions.md, "Sensitivity presets")
          --summary-only    print only the summary line, not the events
          --capture OUT     also write the scenario's reports as a btsnoop capture (for replay); for a rooms
                            scenario one capture per gateway, OUT containing {gateway}, and the ground truth
                            on stdout instead of the comparison
          --frontier        instead of the comparison, the latency / false-transition frontier of a family of
                            simple rules and of the engine over a grid of its enter parameters (slow: about
                            15 engine runs per scenario and seed; docs/tracking-and-regions.md); for rooms
                            scenarios the arbiter over a grid of its parameters (docs/rooms.md)
          --true-levels     rooms --frontier: also every variant fed the links' true levels (docs/rooms.md)
          --ablations       rooms: also the classifier's ablation rows (analysis: the classifier with one term
                            after another told its true value; docs/rooms.md, "Session 28")
          --events ROW      rooms, one scenario and seed: print that row's decisions (e.g. fp-margin,
                            trained, oracle-fp) as the room_change lines instead of the arbiter's, and the
                            true stays as room_truth lines (docs/rooms.md, "Session 30")
          --gateway-links V rooms: the gateways' own radio terms for self-calibration, assumed (default) or
                            pessimistic (docs/scenarios.md, "Gateway links")
          --spatial-bias V  rooms: the people's position-dependent link bias and postures, measured
                            (default) or off (none: the easier model before; docs/scenarios.md, "Spatial bias")
          --teach           regions: teach every (region, beacon) link first (held 30 s at the boundary and
                            30 s inside, docs/scenarios.md, "The teach phase") and add the taught engine, the
                            oracle (the links' constant offsets told exactly) and the peers with the taught
                            levels to the comparison
          --teach-seconds N the same, holding N seconds at each spot (1...60)
          --teach-turning   the same, the installer turning through four postures during each hold
                            (with --frontier: also the engine over a grid of the taught links' levels and keys,
                            with the taught levels and with the oracle's, on the same streams)
          --taught-grid G   --frontier --teach: that grid instead of the default, written A:H:M:E:X, five
                            comma-separated lists: the enter allowance below the taught boundary, the exit
                            level's distance below the enter level, enter_margin_db, enter_evidence_db,
                            exit_period_s (e.g. 0,2:5:3.5:30:30)
          --teach-retries N with --teach: the installer teaches a spot again, up to N times (0...3), while
                            its quality figure asks for more (the last hold is kept)
          --teach-check C   with --teach: what the quality figure judges a hold by besides its reports:
                            spread (the product's), step (the halves' medians) or spread+step
          --teach-errors    with --teach: instead of the comparison, each taught link's level error (its
                            taught boundary and inside levels minus the oracle's), per link and summarised
        """

    static let teachChecks: [String: TeachQuality.Checks] = [
        "spread": .spread, "step": .step, "spread+step": [.spread, .step],
    ]

    static func run(_ arguments: [String]) -> Int32 {
        var paths: [String] = []
        var seed: UInt64?
        var seeds = 1
        var summaryOnly = false
        var capturePath: String?
        var frontier = false
        var trueLevels = false
        var ablations = false
        var eventsRow: String?
        var radioModel: ScenarioRadio.Model?
        var preset: RegionSensitivity?
        var gatewayLinks: GatewayLinkRadio.Variant?
        var spatialBias: SpatialBiasRadio.Variant?
        var teach: TeachPhase?
        var taughtGrid: [TaughtFrontierRule]?
        var teachErrors = false
        var retries: Int?
        var checks: TeachQuality.Checks?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--scenario":
                guard let value = rest.popFirst() else { return usageError("--scenario needs a file") }
                paths.append(value)
            case "--seeds":
                guard let value = rest.popFirst(), let parsed = Int(value), (1...1_000).contains(parsed) else {
                    return usageError("--seeds needs a number 1...1000")
                }
                seeds = parsed
            case "--seed":
                guard let value = rest.popFirst(), let parsed = UInt64(value) else {
                    return usageError("--seed needs a number 0...18446744073709551615")
                }
                seed = parsed
            case "--radio":
                guard let value = rest.popFirst(), let parsed = ScenarioRadio.Model(rawValue: value) else {
                    return usageError("--radio needs measured, pessimistic or independent")
                }
                radioModel = parsed
            case "--sensitivity":
                guard let value = rest.popFirst(), let parsed = RegionSensitivity(rawValue: value) else {
                    return usageError("--sensitivity needs fast, balanced or steady")
                }
                preset = parsed
            case "--gateway-links":
                guard let value = rest.popFirst(), let parsed = GatewayLinkRadio.Variant(rawValue: value) else {
                    return usageError("--gateway-links needs assumed or pessimistic")
                }
                gatewayLinks = parsed
            case "--spatial-bias":
                guard let value = rest.popFirst(), let parsed = SpatialBiasRadio.Variant(rawValue: value) else {
                    return usageError("--spatial-bias needs measured or off")
                }
                spatialBias = parsed
            case "--teach": teach = teach ?? TeachPhase()
            case "--teach-turning":
                teach = TeachPhase(
                    seconds: teach?.seconds ?? TeachPhase.defaultSeconds, postures: 4, retries: teach?.retries ?? 0)
            case "--teach-seconds":
                guard let value = rest.popFirst(), let parsed = Double(value),
                    parsed >= 1, parsed <= TeachPhase.maximumSeconds
                else { return usageError("--teach-seconds needs a number of seconds 1...60") }
                teach = TeachPhase(seconds: parsed, postures: teach?.postures ?? 1, retries: teach?.retries ?? 0)
            case "--teach-retries":
                guard let value = rest.popFirst(), let parsed = Int(value), (0...3).contains(parsed) else {
                    return usageError("--teach-retries needs a number 0...3")
                }
                retries = parsed
            case "--taught-grid":
                guard let value = rest.popFirst(), let parsed = TaughtFrontierRule.grid(spec: value) else {
                    return usageError("--taught-grid needs A:H:M:E:X, five comma-separated lists of numbers")
                }
                taughtGrid = parsed
            case "--teach-check":
                guard let value = rest.popFirst(), let parsed = Self.teachChecks[value] else {
                    return usageError("--teach-check needs spread, step or spread+step")
                }
                checks = parsed
            case "--teach-errors": teachErrors = true
            case "--summary-only": summaryOnly = true
            case "--frontier": frontier = true
            case "--true-levels": trueLevels = true
            case "--ablations": ablations = true
            case "--events":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    return usageError("--events needs a row name")
                }
                eventsRow = value
            case "--capture":
                guard let value = rest.popFirst() else { return usageError("--capture needs a file") }
                capturePath = value
            case "--help", "-h":
                Output.stdout(usage)
                return ExitCode.ok
            default: return usageError("unknown argument '\(argument)'")
            }
        }
        guard !paths.isEmpty else { return usageError("--scenario FILE is required") }
        if frontier, capturePath != nil { return usageError("--frontier and --capture do not go together") }
        if trueLevels, !frontier { return usageError("--true-levels goes with --frontier") }
        if ablations, frontier || capturePath != nil {
            return usageError("--ablations goes with neither --frontier nor --capture")
        }
        if eventsRow != nil, frontier || capturePath != nil || summaryOnly || paths.count > 1 || seeds > 1 {
            return usageError(
                "--events takes one scenario and one seed, without --summary-only, --frontier or --capture")
        }
        if teach != nil, capturePath != nil { return usageError("--teach does not go with --capture") }
        if taughtGrid != nil, !frontier || teach == nil {
            return usageError("--taught-grid goes with --frontier and --teach")
        }
        if let retries {
            guard var phase = teach else { return usageError("--teach-retries goes with --teach") }
            phase.retries = retries
            teach = phase
        }
        if let checks {
            guard var phase = teach else { return usageError("--teach-check goes with --teach") }
            phase.checks = checks
            teach = phase
        }
        if teachErrors, teach == nil || frontier || capturePath != nil {
            return usageError("--teach-errors goes with --teach, without --frontier and --capture")
        }
        if capturePath != nil, paths.count > 1 || seeds > 1 {
            return usageError("--capture takes one scenario and one seed")
        }

        var scenarios: [Scenario] = []
        var texts: [(path: String, text: String)] = []
        for path in paths {
            switch ScenarioFile.read(path) {
            case let .success(contents): texts.append((path, contents))
            case let .failure(problem):
                Output.stderr("beaconbridge simulate: \(path): \(problem.message)")
                return ExitCode.noInput
            }
        }
        // Multi-gateway scenarios ("kind": "rooms") go to the room arbiter's simulation (docs/rooms.md).
        let rooms = texts.filter { RoomScenario.isRoomScenario(json: $0.text) }
        if !rooms.isEmpty {
            if preset != nil || teach != nil {
                return usageError("--sensitivity and --teach take region scenarios (rooms have their own arbiter)")
            }
            if radioModel == .independent {
                return usageError(
                    "--radio independent takes region scenarios (rooms run on the measured or pessimistic radio)")
            }
            guard rooms.count == texts.count else {
                return usageError("rooms scenarios cannot be mixed with region scenarios")
            }
            if let capturePath {
                return SimulateRooms.capture(text: rooms[0], seed: seed, pattern: capturePath, radioModel: radioModel)
            }
            return SimulateRooms.run(
                texts: rooms, seed: seed, seeds: seeds, summaryOnly: summaryOnly, frontier: frontier,
                trueLevels: trueLevels, gatewayLinks: gatewayLinks, spatialBias: spatialBias, radioModel: radioModel,
                ablations: ablations, eventsRow: eventsRow)
        }
        if ablations { return usageError("--ablations takes rooms scenarios") }
        if eventsRow != nil { return usageError("--events takes rooms scenarios") }
        for (path, text) in texts {
            do {
                var scenario = try Scenario(json: text, radioModel: radioModel)
                if let seed { scenario.seed = seed }
                if let preset {
                    scenario.regions = scenario.regions.map { rule in
                        var rule = rule
                        rule.apply(preset)
                        return rule
                    }
                }
                scenarios.append(scenario)
            } catch {
                Output.stderr("beaconbridge simulate: \(path): \(error)")
                return error.kind == .invalid ? ExitCode.config : ExitCode.dataError
            }
        }
        if trueLevels { return usageError("--true-levels takes rooms scenarios") }
        if gatewayLinks != nil { return usageError("--gateway-links takes rooms scenarios") }
        if spatialBias != nil { return usageError("--spatial-bias takes rooms scenarios") }
        if teachErrors, let teach { return SimulateTeachErrors.run(scenarios, seeds: seeds, teach: teach) }
        if frontier {
            return SimulateFrontier.run(
                scenarios, seeds: seeds, teach: teach, taughtGrid: taughtGrid ?? TaughtFrontierRule.defaultGrid)
        }
        if let capturePath, let failed = SimulateCapture.write(scenarios[0], to: capturePath) { return failed }

        let single = scenarios.count == 1 && seeds == 1
        var summaries: [SimulationSummary] = []
        for base in scenarios {
            for offset in 0..<seeds {
                var scenario = base
                scenario.seed = base.seed &+ UInt64(offset)
                let onEvent = { (event: EngineEvent) in
                    if single, !summaryOnly { Output.stdout(SimulateEventJSON.encode(event).serialized) }
                }
                let run = ScenarioRun(scenario)
                let summary = teach.map { run.runTaught($0, onEvent: onEvent) } ?? run.run(onEvent: onEvent)
                Output.stdout(SimulateEventJSON.encode(summary, scenario: scenario).serialized)
                Output.stderr(SimulateEventJSON.text(summary, scenario: scenario))
                summaries.append(summary)
            }
        }
        if !single {
            let all = SimulationSummary.merged(summaries)
            Output.stdout(
                JSONValue.object([
                    ("type", .string("aggregate")), ("runs", .int(Int64(summaries.count))),
                    ("scenarios", .array(scenarios.map { .string($0.name) })),
                    ("seeds_per_scenario", .int(Int64(seeds))),
                    ("beacon_hours", .double((all.beaconHours * 1000).rounded() / 1000)),
                    ("detectors", SimulateComparison.json(all)),
                ]).serialized)
            Output.stderr(
                "all \(summaries.count) runs (\(scenarios.map(\.name).joined(separator: ", ")); \(seeds) seed(s) each), "
                    + "\((all.beaconHours * 100).rounded() / 100) beacon-hours:\n" + SimulateComparison.text(all))
        }
        return ExitCode.ok
    }

    private static func usageError(_ message: String) -> Int32 {
        Output.stderr("beaconbridge simulate: \(message)\n\n\(usage)")
        return ExitCode.usage
    }
}
