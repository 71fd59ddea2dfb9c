import BeaconModel
import BeaconSimulation
import BeaconTracking

#if canImport(Glibc)
import Glibc
#endif

/// `simulate --teach-errors` (with `--teach` or `--teach-turning`): the teach's level error per link, what each
/// taught (region, beacon) link's boundary and inside levels come out at minus what the oracle is told (the true
/// mean there plus the link's constant offset). One `teach_error` JSON line per link and run, then a
/// `teach_error_summary` line per statistic (mean = bias, sd = spread), and the summary as text on stderr.
/// Besides the product's statistic (`LevelRecorder.summary`, the one the taught levels use) it shows what two
/// other centres of the same reports would give: their mean in dB and their mean power (linear, in dBm).
enum SimulateTeachErrors {
    static func run(_ scenarios: [Scenario], seeds: Int, teach: TeachPhase) -> Int32 {
        var errors: [String: [Double]] = [:]
        var order: [String] = []
        func note(_ name: String, _ value: Double?) {
            guard let value else { return }
            if errors[name] == nil { order.append(name) }
            errors[name, default: []].append(value)
        }
        for base in scenarios {
            for offset in 0..<seeds {
                var scenario = base
                scenario.seed = base.seed &+ UInt64(offset)
                for recording in teach.recordings(scenario) {
                    var fields: [(String, JSONValue)] = [
                        ("type", .string("teach_error")), ("scenario", .string(scenario.name)),
                        ("seed", .string(String(scenario.seed))), ("region", .string(recording.key.region)),
                        ("beacon", .string(recording.key.beaconID)), ("rate_hz", .double(recording.rate)),
                        ("link_offset_db", TableText.json(recording.offset, 100)),
                    ]
                    let band = recording.rate >= 5 ? ">=5Hz" : "<5Hz"
                    for (spot, reports, truth) in [
                        ("boundary", recording.boundary, recording.oracle.boundary),
                        ("inside", recording.inside, recording.oracle.inside),
                    ] {
                        guard let truth else { continue }
                        var recorder = LevelRecorder()
                        for report in reports { recorder.add(rssi: report.rssi, at: report.at) }
                        let values = reports.map { Double($0.rssi) }
                        let taught = recorder.summary.map { $0.level - truth.level }
                        let meanDB = values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) - truth.level
                        let linear =
                            values.isEmpty
                            ? nil
                            : 10 * log10(values.map { pow(10, $0 / 10) }.reduce(0, +) / Double(values.count))
                                - truth.level
                        let sorted = values.sorted()
                        let trimmed10 = trimmedMean(sorted, 0.1).map { $0 - truth.level }
                        let trimmed25 = trimmedMean(sorted, 0.25).map { $0 - truth.level }
                        let quarters = quarterMedians(reports).map { $0 - truth.level }
                        note("\(spot) trimmed 10%", trimmed10)
                        note("\(spot) trimmed 25%", trimmed25)
                        note("\(spot) quarter medians", quarters)
                        // One field at a time: as one array literal, Swift 6.0.3 (the trixie build) gave up
                        // type-checking it in reasonable time.
                        let summary = recorder.summary
                        func decibels(_ value: Double?) -> JSONValue { value.map { TableText.json($0, 100) } ?? .null }
                        fields.append(("\(spot)_reports", .int(Int64(reports.count))))
                        fields.append(("\(spot)_spread_db", decibels(summary?.spread)))
                        fields.append(("\(spot)_step_db", decibels(summary?.step)))
                        fields.append(("\(spot)_good", .bool(judge(spot, summary, teach.checks))))
                        fields.append(("\(spot)_spread_good", .bool(judge(spot, summary, .spread))))
                        fields.append(("\(spot)_step_good", .bool(judge(spot, summary, .step))))
                        fields.append(("\(spot)_error_db", decibels(taught)))
                        fields.append(("\(spot)_mean_db_error_db", decibels(meanDB)))
                        fields.append(("\(spot)_linear_mean_error_db", decibels(linear)))
                        note("\(spot) taught", taught)
                        note("\(spot) taught \(band)", taught)
                        note("\(spot) mean dB", meanDB)
                        note("\(spot) linear mean", linear)
                    }
                    Output.stdout(JSONValue.object(fields).serialized)
                }
            }
        }
        var text =
            "teach level error, taught minus oracle (dB), \(scenarios.count * seeds) runs, "
            + "\(teach.postures) posture(s) per \(TableText.rounded(teach.seconds)) s hold:\n"
        for name in order {
            let values = errors[name] ?? []
            let mean = values.reduce(0, +) / Double(max(1, values.count))
            let variance =
                values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, values.count - 1))
            let sd = variance.squareRoot()
            Output.stdout(
                JSONValue.object([
                    ("type", .string("teach_error_summary")), ("statistic", .string(name)),
                    ("links", .int(Int64(values.count))), ("mean_db", TableText.json(mean, 100)),
                    ("sd_db", TableText.json(sd, 100)),
                ]).serialized)
            text +=
                "  " + TableText.cell(name, 26) + "n " + TableText.cell(String(values.count), 5) + "mean "
                + TableText.cell(TableText.rounded(mean, 100), 7) + "sd " + TableText.rounded(sd, 100) + "\n"
        }
        Output.stderr(text)
        return ExitCode.ok
    }

    /// Whether the quality figure, judging by `checks`, calls the spot's recording good.
    static func judge(_ spot: String, _ level: TaughtLevel?, _ checks: TeachQuality.Checks) -> Bool {
        TeachQuality(spot: spot == "boundary" ? .boundary : .inside, level: level, checks: checks).isGood
    }

    /// The mean of the sorted values less a `share` at each end; nil when empty.
    static func trimmedMean(_ sorted: [Double], _ share: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let cut = Int((share * Double(sorted.count)).rounded(.down))
        let kept = sorted[cut..<max(cut + 1, sorted.count - cut)]
        return kept.reduce(0, +) / Double(kept.count)
    }

    /// The mean of the medians of the recording's four quarters in time; nil when a quarter is empty.
    static func quarterMedians(_ reports: [(rssi: Int, at: Double)]) -> Double? {
        guard let first = reports.first?.at, let last = reports.last?.at, last > first else { return nil }
        var medians: [Double] = []
        for quarter in 0..<4 {
            let low = first + (last - first) * Double(quarter) / 4
            let high = first + (last - first) * Double(quarter + 1) / 4
            let values = reports.filter { $0.at >= low && (quarter == 3 ? $0.at <= high : $0.at < high) }
                .map { Double($0.rssi) }.sorted()
            guard !values.isEmpty else { return nil }
            medians.append(LevelRecorder.median(values))
        }
        return medians.reduce(0, +) / 4
    }
}
