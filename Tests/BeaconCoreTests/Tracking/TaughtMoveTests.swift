import Testing

@testable import BeaconModel
@testable import BeaconRooms
@testable import BeaconTracking

/// A taught link notices that its gateway moved (issue 43, docs/teach.md "When a gateway moves"): the record keeps
/// what the gateway heard of its peers at the teach, and self-calibration's levels far from those, for long
/// enough, mark it.
@Suite struct TaughtMoveTests {
    static func record(gateway: String = "gw-a", anchors: [String: Double]) -> TaughtRecord {
        var record = TaughtRecord(
            site: "bb", gateway: gateway, region: "desk", device: "ibeacon:x:1:1",
            levels: [.boundary: TaughtLevel(level: -70, spread: 1, reports: 30, seconds: 30)], recorded: 100)
        record.anchors = anchors
        return record
    }

    @Test func selfCalibrationHearsEachPeerAtItsMedian() {
        var calibration = GatewayCalibration()
        for i in 0..<12 {
            let t = Double(i)
            calibration.record(receiver: "gw-a", transmitter: "gw-b", rssi: -60 - Double(i % 3), at: t)
            calibration.record(receiver: "gw-a", transmitter: "gw-c", rssi: -75, at: t)
            calibration.record(receiver: "gw-b", transmitter: "gw-a", rssi: -50, at: t)
        }
        calibration.record(receiver: "gw-a", transmitter: "gw-d", rssi: -80, at: 11)  // too few samples
        #expect(calibration.levelsHeard(by: "gw-a") == ["gw-b": -61, "gw-c": -75])
        #expect(calibration.levelsHeard(by: "gw-b") == ["gw-a": -50])
        #expect(calibration.levelsHeard(by: "gw-z").isEmpty)
    }

    @Test func theShiftIsTheMedianChangeOverPeersHeardThenAndNow() {
        let record = Self.record(anchors: ["gw-b": -60, "gw-c": -75, "gw-d": -80])
        // One pair blocked by a person (12 dB), two unchanged: the median says it did not move.
        let blocked = record.anchorShift(heard: ["gw-b": -72, "gw-c": -75.5, "gw-d": -80])
        #expect(blocked?.peers == 3 && blocked?.shift == 0.5)
        let moved = record.anchorShift(heard: ["gw-b": -70, "gw-c": -66, "gw-e": -50])
        #expect(moved?.peers == 2 && moved?.shift == 9.5)
        #expect(record.anchorShift(heard: ["gw-e": -50]) == nil)
        #expect(Self.record(anchors: [:]).anchorShift(heard: ["gw-b": -60]) == nil)
    }

    @Test func aMoveIsMarkedOnlyAfterItHeldAndOnlyOnThisGatewaysRecords() {
        var book = TaughtBook(site: "bb")
        book.put(Self.record(anchors: ["gw-b": -60, "gw-c": -75]))
        book.put(Self.record(gateway: "gw-b", anchors: ["gw-a": -60]))
        var watch = TaughtMoveWatch()
        let far = ["gw-b": -70.0, "gw-c": -83.0]
        #expect(watch.check(book, gateway: "gw-a", heard: far, at: 1_000).isEmpty)
        #expect(watch.check(book, gateway: "gw-a", heard: far, at: 1_200).isEmpty)
        // Back within the bound once: the clock starts again.
        #expect(watch.check(book, gateway: "gw-a", heard: ["gw-b": -61, "gw-c": -75], at: 1_250).isEmpty)
        #expect(watch.check(book, gateway: "gw-a", heard: far, at: 1_300).isEmpty)
        #expect(watch.check(book, gateway: "gw-a", heard: far, at: 1_599).isEmpty)
        let marked = watch.check(book, gateway: "gw-a", heard: far, at: 1_600)
        #expect(marked.count == 1)
        #expect(marked.first?.gateway == "gw-a")
        #expect(marked.first?.moved == TaughtMove(shift: 9, peers: 2, since: 1_300))
        book.put(marked[0])
        #expect(watch.check(book, gateway: "gw-a", heard: far, at: 2_000).isEmpty, "marked once")
    }

    @Test func anchorsAndTheMoveSurviveTheRecordsJSON() throws {
        var record = Self.record(anchors: ["gw-b": -60.04, "gw-c": -75])
        record.moved = TaughtMove(shift: 9.04, peers: 2, since: 1_300)
        let text = record.json
        #expect(text.contains("\"anchors\":{\"gw-b\":-60,\"gw-c\":-75}"))
        #expect(text.contains("\"moved\":{\"shift_db\":9,\"peers\":2,\"since\":1300}"))
        let read = try TaughtRecord.parse(Array(text.utf8), site: "bb", regions: ["desk"]).get()
        #expect(read.anchors == ["gw-b": -60, "gw-c": -75])
        #expect(read.moved == TaughtMove(shift: 9, peers: 2, since: 1_300))
        // A record without either (as every record before them) reads as before.
        let plain = try TaughtRecord.parse(
            Array(Self.record(anchors: [:]).json.utf8), site: "bb", regions: ["desk"]
        ).get()
        #expect(plain.anchors.isEmpty && plain.moved == nil)
    }

    @Test(arguments: [
        ("\"anchors\":[1]", "anchors"),
        ("\"anchors\":{\"gw-b\":-300}", "anchors"),
        ("\"anchors\":{\"\":-60}", "anchors"),
        ("\"anchors\":{\"gw-b\":\"loud\"}", "anchors"),
        ("\"moved\":{\"shift_db\":-1,\"peers\":2,\"since\":1}", "moved"),
        ("\"moved\":{\"shift_db\":9,\"peers\":0,\"since\":1}", "moved"),
        ("\"moved\":{\"shift_db\":9,\"peers\":2.5,\"since\":1}", "moved"),
        ("\"moved\":{\"shift_db\":9,\"peers\":2}", "moved"),
        ("\"moved\":7", "moved"),
    ])
    func badAnchorsOrMovesAreRefusedNamingTheField(member: String, step: String) {
        let base = Self.record(anchors: [:]).json
        let text = String(base.dropLast()) + "," + member + "}"
        switch TaughtRecord.parse(Array(text.utf8), site: "bb", regions: ["desk"]) {
        case .success: Issue.record("accepted \(member)")
        case let .failure(failure): #expect(failure.step == step, "\(failure.message)")
        }
    }
}
