import BeaconModel
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `beaconbridge` binary (`swift build` first) against the example scenarios.
@Suite struct SimulateCommandTests {
    static let packageRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/CLITests/SimulateCommandTests.swift
        return parts.joined(separator: "/")
    }()
    static let binary = packageRoot + "/.build/debug/beaconbridge"

    /// Runs the binary with `arguments` (without blocking a cooperative-pool thread while it runs).
    static func run(_ arguments: [String]) async throws -> BuiltBinary.Result { try await BuiltBinary.run(arguments) }

    static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func writeTemporary(_ text: String) -> String {
        let path = "/tmp/beaconbridge-scenario-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
        return path
    }

    @Test func walkPastPrintsEventsAndASummary() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let result = try await Self.run([
            "simulate", "--scenario", Self.packageRoot + "/config/scenarios/walk-past.json",
        ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count > 10)
        #expect(lines.allSatisfy { $0.hasPrefix("{\"type\":\"") && $0.hasSuffix("}") })
        let enters = lines.filter { $0.hasPrefix("{\"type\":\"region\",\"kind\":\"enter\"") }
        let exits = lines.filter { $0.hasPrefix("{\"type\":\"region\",\"kind\":\"exit\"") }
        // The walker crosses the desk region in about 5 s at t = 30-50 (too brief for 30 dB·s of evidence per
        // second: a walk-through, not a visit) and stays at t = 170-240: one enter and one exit.
        #expect(enters.count == 1, "the walker enters the desk region when it stays")
        #expect(exits.count == 1)
        #expect(lines.contains { $0.contains("\"type\":\"presence\",") && $0.contains("\"state\":\"seen\"") })
        #expect(lines.last!.hasPrefix("{\"type\":\"summary\",\"scenario\":\"walk-past\",\"seed\":7,"))
        #expect(lines.last!.contains("\"flaps\":0"))
        #expect(result.stderr.contains("time in the right state:"))
        #expect(result.stderr.contains("enter latency: p50"))
    }

    @Test func eventLinesFollowTheDocumentedLayout() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let result = try await Self.run([
            "simulate", "--scenario", Self.packageRoot + "/config/scenarios/walk-past.json",
        ])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let enter = try JSONValue(parsing: try #require(lines.first { $0.contains("\"kind\":\"enter\"") }))
        guard case let .object(members) = enter, case let .object(beacon)? = enter["beacon"] else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == ["type", "kind", "time", "region", "beacon_id", "state", "since", "beacon"])
        #expect(
            beacon.map(\.0) == [
                "id", "format", "identifiers", "address", "name", "rssi", "smoothed_rssi", "distance",
                "measured_power", "report_rate", "last_seen", "fields",
            ])
        #expect(enter["region"] == .string("desk"))
        #expect(enter["state"] == .string("inside"))
        #expect(enter["beacon"]?["name"] == .string("keys"))
        let summary = try JSONValue(parsing: try #require(lines.last))
        #expect(summary["type"] == .string("summary"))
        #expect(summary["enter_latency_s"]?["count"] == .int(1))
        guard case let .array(detectors)? = summary["detectors"] else {
            Issue.record("no detectors in the summary")
            return
        }
        #expect(
            detectors.map { $0["name"] }
                == [
                    "beaconbridge", "raw-threshold", "median-iqr-15s", "running-average-20s",
                    "kalman",
                ].map { .string($0) })
        #expect(
            detectors.allSatisfy {
                $0["false_transitions_per_beacon_hour"] != nil && $0["exit_latency_s"]?["p95"] != nil
            })
    }

    @Test func seedOverrideChangesTheRunDeterministically() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let scenario = Self.packageRoot + "/config/scenarios/walk-past.json"
        let a = try await Self.run(["simulate", "--scenario", scenario, "--seed", "99", "--summary-only"])
        let b = try await Self.run(["simulate", "--scenario", scenario, "--seed", "99", "--summary-only"])
        let c = try await Self.run(["simulate", "--scenario", scenario, "--seed", "100", "--summary-only"])
        #expect(a.status == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout != c.stdout)
        #expect(a.stdout.split(separator: "\n").count == 1)
        #expect(a.stdout.contains("\"seed\":99,"))
    }

    @Test func teachAddsTheTaughtOracleAndTaughtPeerRows() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let scenario = Self.packageRoot + "/config/scenarios/walk-in-stay-out.json"
        let plain = try await Self.run(["simulate", "--scenario", scenario, "--summary-only"])
        let taught = try await Self.run(["simulate", "--scenario", scenario, "--summary-only", "--teach"])
        let short = try await Self.run([
            "simulate", "--scenario", scenario, "--summary-only", "--teach-seconds", "10",
        ])
        #expect(plain.status == 0 && taught.status == 0 && short.status == 0)
        for name in ["beaconbridge-taught", "beaconbridge-oracle", "kalman+taught", "median-iqr-15s+taught"] {
            #expect(taught.stdout.contains("\"name\":\"\(name)\""), "\(name)")
            #expect(taught.stderr.contains(name), "\(name)")
            #expect(!plain.stdout.contains("\"name\":\"\(name)\""), "\(name)")
        }
        // The untaught rows are the plain run's (the same stream); a shorter teach changes the taught ones.
        let firstRow = { (text: String) in text.split(separator: "\n").first { $0.contains("beaconbridge ") } }
        #expect(firstRow(plain.stderr) == firstRow(taught.stderr))
        #expect(taught.stdout != short.stdout)
        let turning = try await Self.run([
            "simulate", "--scenario", scenario, "--summary-only", "--teach", "--teach-turning",
        ])
        #expect(turning.status == 0 && turning.stdout != taught.stdout)
        #expect(firstRow(turning.stderr) == firstRow(plain.stderr))
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--teach-seconds", "61"]).status == 64)
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--teach-seconds", "x"]).status == 64)
        #expect(
            try await Self.run(["simulate", "--scenario", scenario, "--teach", "--capture", "/tmp/never.btsnoop"])
                .status
                == 64)
        let rooms = Self.packageRoot + "/config/scenarios/rooms-corridor.json"
        #expect(try await Self.run(["simulate", "--scenario", rooms, "--teach"]).status == 64)
    }

    @Test func teachErrorsPrintEachLinksLevelErrorAgainstTheOracle() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let scenario = Self.packageRoot + "/config/scenarios/walk-in-stay-out.json"
        let errors = try await Self.run(["simulate", "--scenario", scenario, "--teach", "--teach-errors"])
        #expect(errors.status == 0)
        let lines = errors.stdout.split(separator: "\n")
        // One line per (region, beacon) link: one region, four beacons.
        #expect(lines.filter { $0.contains("\"type\":\"teach_error\"") }.count == 4)
        #expect(lines.contains { $0.contains("\"statistic\":\"boundary taught\"") && $0.contains("\"links\":4") })
        #expect(lines.allSatisfy { !$0.contains("\"type\":\"summary\"") })
        #expect(errors.stderr.contains("teach level error, taught minus oracle"))
        let turning = try await Self.run([
            "simulate", "--scenario", scenario, "--teach-turning", "--teach-errors",
        ])
        #expect(turning.status == 0 && turning.stdout != errors.stdout)
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--teach-errors"]).status == 64)
        // A retry of the spots the quality figure flags (none with 0: the same output).
        let noRetry = try await Self.run([
            "simulate", "--scenario", scenario, "--teach", "--teach-retries", "0", "--teach-errors",
        ])
        #expect(noRetry.status == 0 && noRetry.stdout == errors.stdout)
        for bad in [["--teach-retries", "1"], ["--teach", "--teach-retries", "4"], ["--teach", "--teach-retries"]] {
            #expect(try await Self.run(["simulate", "--scenario", scenario] + bad).status == 64)
        }
        // The quality figure the retries judge by: the product's (spread) by default; the step check on request.
        let spread = try await Self.run([
            "simulate", "--scenario", scenario, "--teach", "--teach-check", "spread", "--teach-errors",
        ])
        #expect(spread.status == 0 && spread.stdout == errors.stdout)
        #expect(errors.stdout.contains("\"boundary_step_db\"") && errors.stdout.contains("\"boundary_step_good\""))
        for bad in [["--teach-check", "step"], ["--teach", "--teach-check", "width"], ["--teach", "--teach-check"]] {
            #expect(try await Self.run(["simulate", "--scenario", scenario] + bad).status == 64)
        }
        #expect(
            try await Self.run(["simulate", "--scenario", scenario, "--teach", "--teach-errors", "--frontier"]).status
                == 64)
    }

    @Test func frontierWithATeachAddsTaughtAndOracleRowsAndAVerdict() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let scenario = Self.packageRoot + "/config/scenarios/demo.json"
        let grid = ["--taught-grid", "2,4:5:3.5:30:30"]
        let plain = try await Self.run(["simulate", "--scenario", scenario, "--frontier"])
        let taught = try await Self.run(["simulate", "--scenario", scenario, "--frontier", "--teach"] + grid)
        #expect(plain.status == 0 && taught.status == 0)
        for name in ["taught-a2-h5-m3.5-e30-x30", "oracle-a2-h5-m3.5-e30-x30", "taught-a4-h5-m3.5-e30-x30"] {
            #expect(taught.stdout.contains("\"name\":\"\(name)\",\"family\":\"\(name.prefix(6))\""), "\(name)")
            #expect(taught.stderr.contains(name), "\(name)")
            #expect(!plain.stdout.contains(name), "\(name)")
        }
        #expect(taught.stdout.contains("\"type\":\"taught_verdict\""))
        #expect(!plain.stdout.contains("taught_verdict"))
        #expect(taught.stdout.contains("\"made_felt_enter_p95_1hz_s\""))
        // The untaught rows are the plain frontier's (the same streams).
        let engine = { (text: String) in text.split(separator: "\n").first { $0.contains("\"name\":\"beaconbridge\"") }
        }
        #expect(engine(plain.stdout) != nil && engine(plain.stdout) == engine(taught.stdout))
        for bad in [["--taught-grid", "2:5:3.5:30"], ["--taught-grid", "2:5:x:30:30"]] {
            #expect(
                try await Self.run(["simulate", "--scenario", scenario, "--frontier", "--teach"] + bad).status == 64)
        }
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--frontier"] + grid).status == 64)
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--teach"] + grid).status == 64)
    }

    @Test func radioAndSensitivityOptionsReplaceTheFilesChoices() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let scenario = Self.packageRoot + "/config/scenarios/carry-in.json"
        let measured = try await Self.run(["simulate", "--scenario", scenario, "--summary-only"])
        let pessimistic = try await Self.run([
            "simulate", "--scenario", scenario, "--summary-only", "--radio", "pessimistic",
        ])
        let steady = try await Self.run([
            "simulate", "--scenario", scenario, "--summary-only", "--sensitivity", "steady",
        ])
        #expect(measured.status == 0 && pessimistic.status == 0 && steady.status == 0)
        #expect(measured.stderr.contains("measured radio") && pessimistic.stderr.contains("pessimistic radio"))
        #expect(measured.stdout != pessimistic.stdout, "another radio, other reports")
        // The same reports judged with the steady preset: the same observation count, other decisions.
        #expect(measured.stdout != steady.stdout)
        #expect(measured.stderr.contains("felt enter p95"))
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--radio", "loud"]).status == 64)
        #expect(try await Self.run(["simulate", "--scenario", scenario, "--sensitivity", "eager"]).status == 64)
    }

    @Test func malformedScenarioNamesTheProblem() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let path = Self.writeTemporary(#"{"duration_s": 60, "beacons": [{"path": [{"t": "soon"}]}]}"#)
        defer { unlink(path) }
        let result = try await Self.run(["simulate", "--scenario", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("beacons[0].path[0].t: expected a number"))
        #expect(result.stdout.isEmpty)

        let broken = Self.writeTemporary("{\"duration_s\": 60,\n \"beacons\": [}")
        defer { unlink(broken) }
        let syntax = try await Self.run(["simulate", "--scenario", broken])
        #expect(syntax.status == 65)
        #expect(syntax.stderr.contains("line 2, column 14"))
    }

    @Test func invalidRegionIsAConfigurationError() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        let path = Self.writeTemporary(
            #"""
            {"duration_s": 60, "regions": [{"name": "a", "match": {}, "enter": {"rssi_above": -70},
              "exit": {"rssi_below": -60}}], "beacons": [{"path": [{"t": 0, "x": 1}]}]}
            """#)
        defer { unlink(path) }
        let result = try await Self.run(["simulate", "--scenario", path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("regions[0].exit.rssi_below: must be lower than enter.rssi_above"))
    }

    @Test func usageAndMissingFile() async throws {
        try #require(access(Self.binary, X_OK) == 0, "build the binary first: swift build")
        #expect(try await Self.run(["simulate"]).status == 64)
        #expect(try await Self.run(["simulate", "--scenario", "x.json", "--seed", "-1"]).status == 64)
        let missing = try await Self.run(["simulate", "--scenario", "/nonexistent/scenario.json"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/nonexistent/scenario.json: No such file or directory"))
    }
}
