import Testing

@testable import BeaconModel
@testable import BeaconRooms

/// Training fingerprints: one walk recorded, walks pooled, the retained message read back and refused when bad
/// (docs/rooms.md, "Training").
@Suite struct RoomFingerprintTests {
    static let t0: Timestamp = 1_700_000_000

    @Test func aWalkRecordsEveryGatewaysMeanSpreadAndHeardShare() throws {
        var recorder = FingerprintRecorder(room: "kitchen", deviceID: "ibeacon:x", start: Self.t0, duration: 10)
        // gw-a every second at -60/-64 alternately; gw-b only in the first 5 seconds at -80.
        for second in 0..<10 {
            let time = Self.t0 + Double(second) + 0.5
            recorder.add(gateway: "gw-a", level: second % 2 == 0 ? -60 : -64, at: time)
            if second < 5 { recorder.add(gateway: "gw-b", level: -80, at: time) }
        }
        let notANumber = recorder.add(gateway: "gw-a", level: .nan, at: Self.t0 + 1)
        let afterTheEnd = recorder.add(gateway: "gw-a", level: -60, at: Self.t0 + 11)
        #expect(!notANumber && !afterTheEnd)
        #expect(recorder.refused == 2)
        let walk = try #require(recorder.fingerprint())
        let a = try #require(walk.levels["gw-a"])
        #expect(abs(a.mean - -62) < 1e-9)
        #expect(abs(a.spread - 2) < 1e-9)
        #expect(a.samples == 10 && a.heardShare == 1)
        #expect(walk.levels["gw-b"]?.heardShare == 0.5)
        #expect(walk.walks == 1 && walk.seconds == 10 && walk.recorded == Self.t0 + 10)
        #expect(abs(walk.quality - 10.0 / 60) < 1e-9)
    }

    @Test func walksPoolTheirStatistics() {
        let one = RoomFingerprint(
            room: "hall", levels: ["gw-a": .init(mean: -60, spread: 2, samples: 30, heardShare: 1)], seconds: 30,
            walks: 1, recorded: Self.t0)
        let two = RoomFingerprint(
            room: "hall",
            levels: [
                "gw-a": .init(mean: -70, spread: 2, samples: 30, heardShare: 1),
                "gw-b": .init(mean: -75, spread: 3, samples: 15, heardShare: 0.5),
            ], seconds: 30, walks: 1, recorded: Self.t0 + 100)
        var book = FingerprintBook([one])
        book.add(two)
        let pooled = book["hall"]
        #expect(pooled?.walks == 2 && pooled?.seconds == 60 && pooled?.recorded == Self.t0 + 100)
        #expect(pooled?.levels["gw-a"]?.mean == -65)
        // Two groups of spread 2 whose means are 10 dB apart: sqrt(4 + 25).
        #expect(abs((pooled?.levels["gw-a"]?.spread ?? 0) - 29.0.squareRoot()) < 1e-9)
        #expect(pooled?.levels["gw-b"]?.heardShare == 0.25)
        #expect(pooled?.quality == 1)
        let forgotten = book.forget("hall")
        let again = book.forget("hall")
        #expect(forgotten && book.isEmpty && !again)
    }

    @Test func theRetainedMessageRoundTripsAndBadRowsAreSkipped() throws {
        let print = RoomFingerprint(
            room: "office",
            levels: [
                "gw-a": .init(mean: -61.25, spread: 3.5, samples: 40, heardShare: 0.975),
                "gw-b": .init(mean: -83, spread: 4, samples: 12, heardShare: 0.3),
            ], seconds: 40, walks: 2, recorded: Self.t0)
        let text = FingerprintBook.payload(print, gateway: "gw-a")
        #expect(FingerprintBook.fingerprint(payload: Array(text.utf8), site: ["gw-a", "gw-b"]) == print)
        // A gateway outside the site is skipped; with none left the message is refused.
        let partial = FingerprintBook.fingerprint(payload: Array(text.utf8), site: ["gw-a"])
        #expect(partial?.levels.keys.sorted() == ["gw-a"])
        #expect(FingerprintBook.fingerprint(payload: Array(text.utf8), site: []) == nil)
        for bad in [
            "", "null", "{\"kind\":\"calibration\"}", String(repeating: "[", count: 100),
            text.replacingOccurrences(of: "-61.25", with: "1e308"),
            text.replacingOccurrences(of: "\"walks\":2", with: "\"walks\":0"),
        ] {
            let read = FingerprintBook.fingerprint(payload: Array(bad.utf8), site: ["gw-a", "gw-b"])
            #expect(read == nil || read?.levels["gw-a"] == nil, "\(bad.prefix(60))")
        }
    }

    @Test func theFingerprintTopicIsParsedApartFromRoomEvents() {
        let topics = RoomTopics(prefix: "bb")
        #expect(topics.fingerprint(room: "kitchen") == "bb/rooms/fingerprint/kitchen")
        #expect(topics.parse("bb/rooms/fingerprint/kitchen") == .fingerprint(roomLevel: "kitchen"))
        #expect(topics.parse("bb/rooms/ibeacon:x/kitchen") == nil)
    }
}
