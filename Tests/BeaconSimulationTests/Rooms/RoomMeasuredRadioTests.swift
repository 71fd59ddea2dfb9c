import BeaconModel
import Foundation
import TestSupport
import Testing

@testable import BeaconSimulation

/// Rooms on the measured radio (issue 43, session 27; docs/rooms.md, "Session 27: the measured radio"): a rooms
/// file that names no radio runs on it, every link mixes the three advertising channels packet by packet with one
/// shadowing process per channel, and the pessimistic radio still draws exactly the streams of before.
@Suite(.ownThread) struct RoomMeasuredRadioTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOfFile: BuiltBinary.packageRoot + "/Tests/Fixtures/rooms/\(name)", encoding: .utf8)
    }

    /// One still beacon 3 m from one gateway, 20 minutes; `radio` is the file's radio block.
    /// The advertisement times of `still(radio:)`'s one person and what its first gateway hears of them.
    static func stillLink(
        radio: String
    ) throws -> (
        schedule: [Double],
        run: (
            observations: [Observation], levels: [Double], fixed: Double, postures: [Double], blocking: BlockingEpisodes
        )
    ) {
        let scenario = try still(radio: radio)
        let simulator = RoomSimulator(scenario)
        let person = scenario.people[0]
        let schedule = simulator.advertisements(of: person, index: 0)
        return (schedule, simulator.link(person, index: 0, gateway: 0, schedule: schedule))
    }

    static func still(radio: String) throws(ScenarioError) -> RoomScenario {
        var scenario = try RoomScenario(
            json: """
                {"kind": "rooms", "name": "still", "seed": 9, "duration_s": 1200, "radio": \(radio),
                 "rooms": [{"name": "a", "x": [0, 10], "y": [0, 4]}], "gateways": [{"id": "gw", "x": 0, "y": 2}],
                 "spatial_bias": {"variant": "off"},
                 "people": [{"id": "tag", "rate_hz": 5, "loss": 0, "path": [{"t": 0, "x": 3, "y": 2}]}]}
                """)
        scenario.radio.noiseFloor = -127
        return scenario
    }

    /// The reports each gateway of Tests/Fixtures/rooms/three-gateways.json hears (without the spatial bias, as
    /// `simulate --capture` writes them): their count and RSSI sum, read from the captures the release build of
    /// 81f802f wrote of that file before it named a radio (then the rooms default, pessimistic).
    @Test func thePessimisticRadioDrawsTheStreamsOfBefore() throws {
        let pinned = try RoomScenario(json: try Self.fixture("three-gateways.json"))
        #expect(pinned.radio.model == .pessimistic && pinned.radio.realistic == .pessimistic)
        // The fixture without its radio block, forced to pessimistic (`simulate --radio pessimistic`): the same.
        let text = try Self.fixture("three-gateways.json")
        let unnamed = text.replacingOccurrences(of: "\"radio\": {\n  \"model\": \"pessimistic\"\n },\n", with: "")
        #expect(unnamed != text)
        let forced = try RoomScenario(json: unnamed, radioModel: .pessimistic)
        let before: [(count: Int, sum: Int)] = [(1414, -104_712), (1430, -106_989), (1345, -110_001)]
        for var scenario in [pinned, forced] {
            scenario.spatialBias = SpatialBiasRadio(.off)
            let simulator = RoomSimulator(scenario)
            for (index, expected) in before.enumerated() {
                let rssi = simulator.observations(gateway: index).compactMap(\.rssi)
                #expect(rssi.count == expected.count && rssi.reduce(0, +) == expected.sum, "gateway \(index)")
            }
        }
        // The same file on the measured radio hears another world.
        var measured = try RoomScenario(json: unnamed)
        measured.spatialBias = SpatialBiasRadio(.off)
        let heard = RoomSimulator(measured).observations(gateway: 0).compactMap(\.rssi)
        #expect((heard.count, heard.reduce(0, +)) != (before[0].count, before[0].sum))
    }

    @Test func roomsFilesDefaultToTheMeasuredRadioAndRefuseTheIndependentOne() throws {
        let unnamed = try Self.still(radio: "{}")
        #expect(unnamed.radio.model == .measured && unnamed.radio.realistic == .measured)
        #expect(unnamed.radio.realistic.channelMixing)
        let forced = try RoomScenario(
            json: try Self.fixture("three-gateways.json"), radioModel: .measured)
        #expect(forced.radio.model == .measured)
        // The file's keys of the correlated radios apply on top of the chosen model's defaults.
        let tuned = try Self.still(radio: #"{"shadowing_time_s": 4}"#)
        #expect(tuned.radio.realistic.shadowingTime == 4 && tuned.radio.realistic.fadingSigma == 1.65)
        do {
            _ = try Self.still(radio: #"{"model": "independent"}"#)
            Issue.record("independent accepted")
        } catch {
            #expect(error.path == "radio.model" && error.kind == .invalid)
            #expect(error.message.contains("measured or pessimistic"))
        }
        #expect(throws: ScenarioError.self) {
            _ = try RoomScenario(json: try Self.fixture("three-gateways.json"), radioModel: .independent)
        }
        do {
            _ = try Self.still(radio: #"{"model": "loud"}"#)
            Issue.record("unknown model accepted")
        } catch {
            #expect(error.path == "radio.model")
        }
    }

    /// Channel offsets of −8, 0 and +8 dB and nothing else random: the measured radio hops between them report by
    /// report, the pessimistic one holds each for its 10 s dwell; the true level is the mean over the channels.
    @Test func theMeasuredRadioMixesTheChannelsReportByReport() throws {
        let quiet =
            #""shadowing_sigma_db": 0, "fading_sigma_db": 0, "channel_offsets_db": [-8, 0, 8], "#
            + #""body_blocking": {"mean_interval_s": 0}, "loss_burst_share": 0"#
        for model in ["measured", "pessimistic"] {
            let (schedule, run) = try Self.stillLink(radio: "{\"model\": \"\(model)\", \(quiet)}")
            let rssi = run.observations.compactMap(\.rssi)
            #expect(rssi.count == schedule.count, "no loss, far above the floor")
            let levels = Set(rssi)
            #expect(levels.count == 3, "\(model): \(levels.sorted())")
            let changes = zip(rssi, rssi.dropFirst()).filter { $0 != $1 }.count
            if model == "measured" {
                // A random channel each: about two reports in three change level.
                #expect(Double(changes) / Double(rssi.count) > 0.6)
            } else {
                // One change per 10 s dwell: 120 in 20 minutes.
                #expect(changes <= 121)
            }
            // The true level is the mean over the channels (offsets averaged) on either radio.
            let mean = Double(rssi.reduce(0, +)) / Double(rssi.count)
            #expect(Set(run.levels.map { ($0 * 1e6).rounded() }).count == 1)
            #expect(abs(run.levels[0] - mean) < 0.5, "\(model): level \(run.levels[0]), mean report \(mean)")
            #expect(run.fixed == 0)
        }
    }

    /// Shadowing only (σ 3.3 dB, τ 2.1 s): on the measured radio each channel has its own process, so a report
    /// departs from the true level (the mean of the three) by σ·√(2/3) ≈ 2.7 dB RMS; on the pessimistic radio the
    /// one process is the level and a report departs from it only by rounding.
    @Test func eachChannelHasItsOwnShadowingAndTheLevelIsTheirMean() throws {
        let only =
            #""fading_sigma_db": 0, "channel_offset_sigma_db": 0, "shadowing_sigma_db": 3.3, "#
            + #""shadowing_time_s": 2.1, "body_blocking": {"mean_interval_s": 0}, "loss_burst_share": 0"#
        for model in ["measured", "pessimistic"] {
            let (schedule, run) = try Self.stillLink(radio: "{\"model\": \"\(model)\", \(only)}")
            #expect(run.observations.count == schedule.count)
            let residuals = zip(run.observations, run.levels).map { Double($0.rssi ?? 0) - $1 }
            let rms = (residuals.map { $0 * $0 }.reduce(0, +) / Double(residuals.count)).squareRoot()
            if model == "measured" {
                #expect(rms > 2.3 && rms < 3.1, "rms \(rms)")
            } else {
                #expect(rms <= 0.5, "rms \(rms)")
            }
            // The level itself still wanders (the shadowing is in it): σ/√3 ≈ 1.9 dB measured, 3.3 dB pessimistic.
            let mean = run.levels.reduce(0, +) / Double(run.levels.count)
            let spread = (run.levels.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(run.levels.count))
                .squareRoot()
            #expect(spread > (model == "measured" ? 1.2 : 2.2) && spread < (model == "measured" ? 2.6 : 4.4))
        }
    }
}
