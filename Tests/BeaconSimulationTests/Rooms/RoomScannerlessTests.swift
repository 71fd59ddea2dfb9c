import Foundation
import TestSupport
import Testing

@testable import BeaconRooms
@testable import BeaconSimulation

/// `config/scenarios/rooms-scannerless.json` (issue 43; docs/rooms.md, "Rooms without a gateway"): the four-rooms
/// flat without gw-office. The office is still a room of the plan and is trained; only the classifier (the
/// `trained` row, the file turning it on) can name it, every other rule is wrong while a beacon is there.
@Suite(.ownThread) struct RoomScannerlessTests {
    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: BuiltBinary.packageRoot + "/config/scenarios/\(name)", encoding: .utf8)
    }

    @Test func theFileIsFourRoomsWithoutTheOfficesGateway() throws {
        let scannerless = try RoomScenario(json: try Self.text("rooms-scannerless.json"))
        let four = try RoomScenario(json: try Self.text("rooms-four-rooms.json"))
        #expect(scannerless.plan.rooms == four.plan.rooms)
        #expect(scannerless.plan.walls == four.plan.walls)
        #expect(scannerless.plan.gateways == four.plan.gateways.filter { $0.id != "gw-office" })
        #expect(scannerless.plan.gateways.map(\.id) == ["gw-living", "gw-kitchen", "gw-bedroom"])
        #expect(scannerless.people.map(\.path) == four.people.map(\.path))
        #expect(scannerless.people.map(\.beaconID) == four.people.map(\.beaconID))
        #expect(scannerless.seed == four.seed && scannerless.duration == four.duration)
        #expect(scannerless.radio.model == four.radio.model)
        #expect(scannerless.training == four.training)
        #expect(scannerless.spatialBias == four.spatialBias)
        // The office is a room without a gateway; the classifier is on, every other arbiter key the default.
        #expect(scannerless.arbiter.roomsWithoutGateway == ["office"])
        #expect(four.arbiter.roomsWithoutGateway.isEmpty)
        #expect(Set(scannerless.arbiter.gatewayRooms.values) == ["living", "kitchen", "bedroom"])
        #expect(scannerless.arbiter.classifier.enabled && !four.arbiter.classifier.enabled)
        var same = scannerless.arbiter
        same.classifier.enabled = false
        same.roomsWithoutGateway = []
        var fourWithoutOffice = four.arbiter
        fourWithoutOffice.gatewayRooms["gw-office"] = nil
        fourWithoutOffice.receiverOffsets["gw-office"] = nil
        #expect(same == fourWithoutOffice)
    }

    /// The file's first 15 minutes (seed 1): the desk tag rests in the office throughout.
    static func shortRun() throws -> (RoomScenarioRun, RoomSummary) {
        let text = try Self.text("rooms-scannerless.json")
        #expect(text.contains(#""duration_s": 7200"#))
        let short = text.replacingOccurrences(of: #""duration_s": 7200"#, with: #""duration_s": 900"#)
        let run = RoomScenarioRun(try RoomScenario(json: short))
        return (run, run.run())
    }

    @Test func theClassifierNamesTheOfficeForTheDeskTagAndNoOtherRuleDoes() throws {
        let (run, summary) = try Self.shortRun()
        let desk = try #require(run.scenario.people.first { $0.beaconID == "desk" })
        for second in stride(from: 0.0, through: 900, by: 30) {
            #expect(run.simulator.trueRoom(of: desk, at: second) == "office")
        }
        // Every room of the plan was trained, the office from the three other rooms' gateways.
        let office = try #require(summary.training.first { $0.room == "office" })
        #expect(office.gatewaysHeard == 3 && office.quality == 1)
        func deskWrong(_ name: String) throws -> Double {
            let rule = try #require(summary.rules.first { $0.name == name }, "\(name)")
            let beacon = try #require(rule.beacons.first { $0.beaconID == "desk" })
            #expect(beacon.judgedSeconds > 800)
            return beacon.wrongSeconds / beacon.judgedSeconds
        }
        // The rules that name a room by its gateways are wrong the whole time the tag is in the office.
        for name in ["beaconbridge", "nearest", "distance-margin", "calibrated", "uncalibrated"] {
            #expect(try deskWrong(name) == 1, "\(name)")
        }
        // The classifier names it from the fingerprints: wrong for at most a tenth of the time.
        let trained = try deskWrong("trained")
        #expect(trained < 0.1, "trained wrong \(trained)")
    }
}
