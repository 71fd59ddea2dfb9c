import BeaconModel
import BeaconSimulation

/// JSON lines printed by `simulate` (layout in docs/scenarios.md). Doubles are rounded for reading:
/// times to the millisecond, RSSI and distances to the centimetre/hundredth.
enum SimulateEventJSON {
    static func encode(_ event: EngineEvent) -> JSONValue {
        switch event {
        case let .sighting(sighting):
            return .object([
                ("type", .string("sighting")), ("time", time(sighting.time)), ("beacon", beacon(sighting.beacon)),
            ])
        case let .presence(presence):
            return .object([
                ("type", .string("presence")), ("time", time(presence.time)),
                ("state", .string(presence.state.rawValue)), ("beacon", beacon(presence.beacon)),
            ])
        case let .region(region):
            return .object([
                ("type", .string("region")), ("kind", .string(region.kind.rawValue)),
                ("time", time(region.time)), ("region", .string(region.region)),
                ("beacon_id", .string(region.beaconID)), ("state", .string(region.state.rawValue)),
                ("since", region.since.map(time) ?? .null), ("beacon", region.beacon.map(beacon) ?? .null),
            ])
        }
    }

    static func beacon(_ snapshot: BeaconSnapshot) -> JSONValue {
        // Typed step by step: Swift 6.0.3 (trixie's swiftlang) gives up type-checking this as one literal.
        let fields: [(String, JSONValue)] = snapshot.fields.sorted { $0.key < $1.key }.map {
            ($0.key, JSONValue($0.value))
        }
        let members: [(String, JSONValue)] = [
            ("id", .string(snapshot.beaconID)), ("format", .string(snapshot.format)),
            ("identifiers", .array(snapshot.identifiers.map { JSONValue.string($0) })),
            ("address", .string(snapshot.address.description)),
            ("name", snapshot.name.map { JSONValue.string($0) } ?? .null),
            ("rssi", snapshot.rssi.map { JSONValue.int(Int64($0)) } ?? .null),
            ("smoothed_rssi", snapshot.smoothedRSSI.map { rounded($0, 100) } ?? .null),
            ("distance", snapshot.distance.map { rounded($0, 100) } ?? .null),
            ("measured_power", snapshot.measuredPower.map { JSONValue.int(Int64($0)) } ?? .null),
            ("report_rate", rounded(snapshot.reportRate, 100)), ("last_seen", time(snapshot.lastSeen)),
            ("fields", .object(fields)),
        ]
        return .object(members)
    }

    static func encode(_ summary: SimulationSummary, scenario: Scenario) -> JSONValue {
        func latencies(_ values: [Double]) -> JSONValue {
            .object([
                ("count", .int(Int64(values.count))),
                ("p50", SimulationSummary.percentile(values, 0.5).map { rounded($0, 1000) } ?? .null),
                ("p95", SimulationSummary.percentile(values, 0.95).map { rounded($0, 1000) } ?? .null),
                ("max", values.max().map { rounded($0, 1000) } ?? .null),
            ])
        }
        let counts = summary.events
        return .object([
            ("type", .string("summary")), ("scenario", .string(scenario.name)),
            ("seed", scenario.seed <= UInt64(Int64.max) ? .int(Int64(scenario.seed)) : .string(String(scenario.seed))),
            ("duration_s", .double(scenario.duration)), ("observations", .int(Int64(summary.observations))),
            (
                "events",
                .object([
                    ("enter", .int(Int64(counts.enter))), ("exit", .int(Int64(counts.exit))),
                    ("seen", .int(Int64(counts.seen))), ("stale", .int(Int64(counts.stale))),
                    ("away", .int(Int64(counts.away))),
                    ("sighting", .int(Int64(counts.sighting))),
                ])
            ),
            ("restarts", .int(Int64(summary.restarts))),
            ("right_state_fraction", rounded(summary.rightFraction, 10_000)),
            ("flaps", .int(Int64(summary.flaps))), ("false_transitions", .int(Int64(summary.falseTransitions))),
            ("missed_transitions", .int(Int64(summary.missed))),
            ("enter_latency_s", latencies(summary.enterLatencies)),
            ("exit_latency_s", latencies(summary.exitLatencies)),
            ("false_exits_during_stays", .int(Int64(summary.falseExitsDuringStays))),
            ("beacon_hours", rounded(summary.beaconHours, 1000)),
            ("detectors", SimulateComparison.json(summary)),
            (
                "pairs",
                .array(
                    summary.pairs.map { pair in
                        .object([
                            ("region", .string(pair.region)), ("beacon_id", .string(pair.beaconID)),
                            (
                                "right_state_fraction",
                                pair.judgedSeconds > 0 ? rounded(pair.rightSeconds / pair.judgedSeconds, 10_000) : .null
                            ),
                            ("false_transitions", .int(Int64(pair.falseTransitions))),
                            ("missed", .int(Int64(pair.missed))),
                            ("enter_latencies_s", .array(pair.enterLatencies.map { rounded($0, 1000) })),
                            ("exit_latencies_s", .array(pair.exitLatencies.map { rounded($0, 1000) })),
                        ])
                    })
            ),
        ])
    }

    static func text(_ summary: SimulationSummary, scenario: Scenario) -> String {
        func seconds(_ value: Double?) -> String { value.map { "\(rounded2($0)) s" } ?? "-" }
        let enter = summary.enterLatencies
        let exit = summary.exitLatencies
        let periods = Set(scenario.regions.map(\.exitPeriod)).sorted().map { "\(rounded2($0)) s" }.joined(
            separator: ", ")
        return """
            scenario \(scenario.name), seed \(scenario.seed), \(scenario.radio.model.rawValue) radio: \(summary.observations) reports \
            over \(rounded2(scenario.duration)) s, \(summary.restarts) restart(s)
              events: \(summary.events.enter) enter, \(summary.events.exit) exit, \(summary.events.seen) seen, \
            \(summary.events.stale) stale, \(summary.events.away) away, \(summary.events.sighting) sightings
              time in the right state: \(rounded2(summary.rightFraction * 100)) %
              flaps: \(summary.flaps) (false transitions \(summary.falseTransitions), missed \(summary.missed))
              enter latency: p50 \(seconds(SimulationSummary.percentile(enter, 0.5))), \
            p95 \(seconds(SimulationSummary.percentile(enter, 0.95))) (n=\(enter.count))
              exit latency: p50 \(seconds(SimulationSummary.percentile(exit, 0.5))), \
            p95 \(seconds(SimulationSummary.percentile(exit, 0.95))) (n=\(exit.count); includes the exit period: \(periods.isEmpty ? "-" : periods))
              side by side over \(rounded2(summary.beaconHours)) beacon-hours (false/b-h: false transitions per beacon-hour; \
            false exits: during true stays; latencies include the exit period; felt: as users feel them, docs/scenarios.md):
            \(SimulateComparison.text(summary))
            """
    }

    private static func time(_ value: Double) -> JSONValue { rounded(value, 1000) }

    private static func rounded(_ value: Double, _ scale: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        return .double((value * scale).rounded() / scale)
    }

    private static func rounded2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
