import BeaconModel
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge simulate` on a multi-gateway scenario (docs/rooms.md), through the built binary.
@Suite struct SimulateRoomsTests {
    static let doorway = SimulateCommandTests.packageRoot + "/config/scenarios/rooms-doorway.json"

    @Test func aRoomsScenarioPrintsTheArbiterAndBothBaselines() async throws {
        try #require(access(SimulateCommandTests.binary, X_OK) == 0, "build the binary first: swift build")
        // Ten minutes of the doorway file: the whole 1.5 h (about 13 s of the debug binary alone) took 110-123 s
        // beside the rest of the suite and the fuzz build, against BuiltBinary's 120 s limit.
        let short = try Self.shortDoorway()
        defer { unlink(short) }
        let result = try await BuiltBinary.run(["simulate", "--scenario", short, "--summary-only"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 1)
        let summary = try JSONValue(parsing: try #require(lines.first))
        guard case let .object(members) = summary,
            case let .array(rules)? = members.first(where: { $0.0 == "rules" })?.1
        else {
            Issue.record("no rules in \(lines)")
            return
        }
        #expect(members.first { $0.0 == "type" }?.1 == .string("room_summary"))
        let names: [JSONValue] = rules.compactMap { rule in
            guard case let .object(fields) = rule else { return nil }
            return fields.first { $0.0 == "name" }?.1
        }
        // The rules with offsets typed by hand, without any, self-calibrated (docs/rooms.md, "Self-calibration"),
        // and with the training phase's fingerprints: the arbiter and the plain k-NN rule (docs/rooms.md,
        // "Training (issue 29, session 19)").
        #expect(
            names
                == [
                    "beaconbridge", "nearest", "distance-margin", "uncalibrated", "nearest-uncalibrated",
                    "distance-margin-uncalibrated", "calibrated", "trained", "fp-margin", "knn",
                ].map { .string($0) })
        for key in ["\"training\":", "\"quality\":", "\"nearest_stop_m\":"] {
            #expect(lines[0].contains(key), "\(key)")
        }
        #expect(result.stderr.contains("training (before the scored stream"))
        for key in ["converge_s_p50", "wander_rms_db", "offset_error_rms_db", "uncalibrated_error_rms_db", "truth_db"] {
            #expect(lines[0].contains("\"\(key)\":"), "\(key)")
        }
        #expect(result.stderr.contains("self-calibration: converged"))
        // The analysis rows, apart from the rules (docs/rooms.md, "The oracle floor").
        guard case let .array(oracles)? = members.first(where: { $0.0 == "oracles" })?.1 else {
            Issue.record("no oracles in \(lines)")
            return
        }
        let oracleNames: [JSONValue] = oracles.compactMap { rule in
            guard case let .object(fields) = rule else { return nil }
            return fields.first { $0.0 == "name" }?.1
        }
        #expect(
            oracleNames
                == [
                    "oracle-mean", "oracle-mean-10s", "oracle-mean-30s", "oracle-mean-60s", "oracle-fixed",
                    "oracle-geometry", "oracle-fp", "oracle-fp-diff", "oracle-fp-room", "oracle-fp-room-diff",
                    "oracle-fp-felt", "oracle-mean+arbiter", "oracle-fixed+arbiter",
                ].map { .string($0) })
        // The evidence floor (docs/rooms.md, "The evidence floor"): not at most `oracle-fp`'s wrong time by
        // construction (noise can help a match), so only a share in 0...1.
        let felt = oracles.first { rule in
            guard case let .object(fields) = rule else { return false }
            return fields.contains { $0.0 == "name" && $0.1 == .string("oracle-fp-felt") }
        }
        guard case let .object(feltFields)? = felt else {
            Issue.record("no oracle-fp-felt in \(lines[0])")
            return
        }
        let feltWrong: Double? =
            switch feltFields.first(where: { $0.0 == "wrong_room_share" })?.1 {
            case let .double(share)?: share
            case let .int(share)?: Double(share)
            default: nil
            }
        #expect(feltWrong.map { $0 >= 0 && $0 <= 1 } == true, "\(String(describing: feltWrong))")
        #expect(lines[0].contains("\"oracle_mean_wrong_too\":"))
        #expect(result.stderr.contains("oracles (analysis, not deployable"))
        for key in ["wrong_room_share", "false_switches_per_beacon_hour", "room_change_latency_s"] {
            #expect(lines[0].contains("\"\(key)\":"))
        }
        #expect(result.stderr.contains("wrong room %"))
        // The confidently wrong figure; no outage in this file, so no dark-room time and no column for it.
        #expect(lines[0].contains("\"confidently_wrong_share\":"))
        #expect(lines[0].contains("\"dark_room_seconds\":0") && lines[0].contains("\"dark_room_elsewhere_share\":null"))
        #expect(result.stderr.contains("conf. wrong %") && !result.stderr.contains("dark elsewhere %"))
    }

    @Test func roomChangesAreEventLinesAndMixingKindsIsAUsageError() async throws {
        try #require(access(SimulateCommandTests.binary, X_OK) == 0, "build the binary first: swift build")
        let short = try Self.shortDoorway()
        defer { unlink(short) }
        let result = try await BuiltBinary.run(["simulate", "--scenario", short])
        #expect(result.status == 0)
        let changes = result.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"type\":\"room_change\",") }
        #expect(!changes.isEmpty)
        #expect(changes.allSatisfy { $0.contains("\"beacon_id\":\"doorway") })
        let mixed = try await BuiltBinary.run([
            "simulate", "--scenario", short, "--scenario",
            SimulateCommandTests.packageRoot + "/config/scenarios/walk-past.json",
        ])
        #expect(mixed.status == 64)
        let bad = SimulateCommandTests.writeTemporary(
            #"{"kind": "rooms", "duration_s": 60, "rooms": [], "people": []}"#)
        defer { unlink(bad) }
        let invalid = try await BuiltBinary.run(["simulate", "--scenario", bad])
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("rooms: required"))
        let links = try await BuiltBinary.run([
            "simulate", "--scenario", short, "--gateway-links", "optimistic",
        ])
        #expect(links.status == 64)
        #expect(links.stderr.contains("--gateway-links needs assumed or pessimistic"))
        let regionLinks = try await BuiltBinary.run([
            "simulate", "--scenario", SimulateCommandTests.packageRoot + "/config/scenarios/walk-past.json",
            "--gateway-links", "pessimistic",
        ])
        #expect(regionLinks.status == 64)
    }

    /// The doorway file cut to 10 minutes, in a temporary file (the caller unlinks it).
    static func shortDoorway() throws -> String {
        SimulateCommandTests.writeTemporary(
            try String(contentsOfFile: doorway, encoding: .utf8)
                .replacingOccurrences(of: #""duration_s": 5400"#, with: #""duration_s": 600"#))
    }

    /// The `room_summary` line of a run's output.
    static func summary(_ run: BuiltBinary.Result) -> JSONValue? {
        run.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
            .first { $0["type"] == .string("room_summary") }
    }

    /// Rooms files run on the measured radio unless told (issue 43, session 27): `--radio pessimistic` gives the
    /// streams of before, `--radio measured` the default's, `--radio independent` is a usage error for rooms.
    @Test func theRadioOptionTakesRoomsFiles() async throws {
        try #require(access(SimulateCommandTests.binary, X_OK) == 0, "build the binary first: swift build")
        let short = try Self.shortDoorway()
        defer { unlink(short) }
        let base = ["simulate", "--scenario", short, "--summary-only"]
        let unnamed = try await BuiltBinary.run(base)
        let measured = try await BuiltBinary.run(base + ["--radio", "measured"])
        let pessimistic = try await BuiltBinary.run(base + ["--radio", "pessimistic"])
        #expect(unnamed.status == 0 && measured.status == 0 && pessimistic.status == 0, "\(pessimistic.stderr)")
        #expect(unnamed.stdout == measured.stdout, "the default is the measured radio")
        #expect(Self.summary(unnamed)?["radio"] == .string("measured"), "\(unnamed.stdout)")
        #expect(Self.summary(pessimistic)?["radio"] == .string("pessimistic"), "\(pessimistic.stdout)")
        #expect(pessimistic.stderr.contains("pessimistic radio), "), "\(pessimistic.stderr)")
        #expect(Self.summary(measured)?["rules"] != Self.summary(pessimistic)?["rules"], "another radio, another world")
        let independent = try await BuiltBinary.run(base + ["--radio", "independent"])
        #expect(independent.status == 64)
        #expect(independent.stderr.contains("--radio independent takes region scenarios"))
        let named = SimulateCommandTests.writeTemporary(
            #"{"kind": "rooms", "duration_s": 60, "radio": {"model": "independent"}, "#
                + #""rooms": [{"name": "a", "x": [0, 1], "y": [0, 1]}], "gateways": [{"id": "g", "x": 0.5, "y": 0.5}], "#
                + #""people": [{"path": [{"t": 0}]}]}"#)
        defer { unlink(named) }
        let refused = try await BuiltBinary.run(["simulate", "--scenario", named])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("radio.model: rooms scenarios run on the measured or pessimistic radio"))
    }

    /// `--ablations` (docs/rooms.md, "Session 28"): the classifier's four ablation rows among the oracle rows, in
    /// order, the rules unchanged; a usage error with `--frontier` or on region scenarios.
    @Test func theAblationsOptionAddsTheClassifiersAnalysisRows() async throws {
        try #require(access(SimulateCommandTests.binary, X_OK) == 0, "build the binary first: swift build")
        let short = try Self.shortDoorway()
        defer { unlink(short) }
        let base = ["simulate", "--scenario", short, "--summary-only"]
        let plain = try await BuiltBinary.run(base)
        let ablated = try await BuiltBinary.run(base + ["--ablations"])
        #expect(plain.status == 0 && ablated.status == 0, "\(ablated.stderr)")
        func names(_ value: JSONValue?) -> [String] {
            guard case let .array(rows)? = value else { return [] }
            return rows.compactMap { row in
                guard case let .string(name)? = row["name"] else { return nil }
                return name
            }
        }
        #expect(Self.summary(plain)?["rules"] == Self.summary(ablated)?["rules"])
        let added = names(Self.summary(ablated)?["oracles"]).filter {
            !names(Self.summary(plain)?["oracles"]).contains($0)
        }
        #expect(added == ["fp+configured", "fp+offset", "fp+true-levels", "fp+fixed-levels"])
        let frontier = try await BuiltBinary.run(base + ["--ablations", "--frontier"])
        #expect(frontier.status == 64)
        let region = try await BuiltBinary.run([
            "simulate", "--scenario", SimulateCommandTests.packageRoot + "/config/scenarios/walk-past.json",
            "--ablations",
        ])
        #expect(region.status == 64)
        #expect(region.stderr.contains("--ablations takes rooms scenarios"))
    }

    /// `--events ROW` (docs/rooms.md, "Session 30"): that row's decisions as the `room_change` lines and the true
    /// stays as `room_truth` lines, the summary unchanged; the arbiter's lines as without it; usage errors for an
    /// unknown row, several seeds, `--summary-only` and region scenarios.
    @Test func theEventsOptionPrintsTheNamedRowsDecisionsAndTheTrueStays() async throws {
        try #require(access(SimulateCommandTests.binary, X_OK) == 0, "build the binary first: swift build")
        let short = try Self.shortDoorway()
        defer { unlink(short) }
        let base = ["simulate", "--scenario", short]
        let plain = try await BuiltBinary.run(base)
        let arbiter = try await BuiltBinary.run(base + ["--events", "beaconbridge"])
        let oracle = try await BuiltBinary.run(base + ["--events", "oracle-fp"])
        #expect(plain.status == 0 && arbiter.status == 0 && oracle.status == 0, "\(oracle.stderr)")
        func lines(_ run: BuiltBinary.Result, _ type: String) -> [Substring] {
            run.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"type\":\"\(type)\",") }
        }
        #expect(lines(arbiter, "room_change") == lines(plain, "room_change"))
        #expect(lines(plain, "room_truth").isEmpty)
        let truth = lines(arbiter, "room_truth")
        #expect(truth.contains { $0.contains("\"beacon_id\":\"doorway\",\"room\":\"living\",\"start\":1700000000,") })
        #expect(lines(oracle, "room_truth") == truth)
        #expect(!lines(oracle, "room_change").isEmpty)
        #expect(lines(oracle, "room_change") != lines(plain, "room_change"), "the oracle's own decisions")
        #expect(Self.summary(oracle) == Self.summary(plain))
        let unknown = try await BuiltBinary.run(base + ["--events", "no-such-row"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no row named 'no-such-row' (rows: beaconbridge, "), "\(unknown.stderr)")
        for refused in [["--seeds", "2"], ["--summary-only"]] {
            let run = try await BuiltBinary.run(base + ["--events", "fp-margin"] + refused)
            #expect(run.status == 64)
            #expect(run.stderr.contains("--events takes one scenario and one seed"))
        }
        let region = try await BuiltBinary.run([
            "simulate", "--scenario", SimulateCommandTests.packageRoot + "/config/scenarios/walk-past.json",
            "--events", "beaconbridge",
        ])
        #expect(region.status == 64)
        #expect(region.stderr.contains("--events takes rooms scenarios"))
    }
}
