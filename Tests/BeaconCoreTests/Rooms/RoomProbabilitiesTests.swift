import Testing

@testable import BeaconCore

/// The leader's room probabilities snapshot (docs/mqtt.md, "Room probabilities").
@Suite struct RoomProbabilitiesTests {
    @Test func thePayloadAndWhatCountsAsAChange() throws {
        let snapshot = RoomProbabilities(
            beaconID: "tag", time: 1_700_000_000.5, room: "b",
            probabilities: ["b": 0.91234, "a": 0.08766], deviceOffset: -3.456)
        #expect(
            snapshot.payload
                == #"{"kind":"room_probabilities","beacon_id":"tag","time":1700000000.5,"room":"b","probabilities":{"a":0.088,"b":0.912},"device_offset_db":-3.46}"#
        )
        #expect(RoomTopics(prefix: "bb").probabilities(beaconID: "tag") == "bb/rooms/tag/probabilities")
        var next = snapshot
        next.probabilities = ["a": 0.12, "b": 0.88]
        #expect(!next.differs(from: snapshot))
        next.probabilities = ["a": 0.2, "b": 0.8]
        #expect(next.differs(from: snapshot))
        next = snapshot
        next.room = "a"
        #expect(next.differs(from: snapshot))
        let undecided = RoomProbabilities(beaconID: "x", time: 0, room: nil, probabilities: [:], deviceOffset: nil)
        #expect(undecided.payload.contains(#""room":null"#) && undecided.payload.contains(#""device_offset_db":null"#))
        #expect(undecided.mostLikely == nil)
    }
}
