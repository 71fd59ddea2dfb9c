import BeaconRooms
import Testing

@testable import YAMLConfig

/// `rooms.training` through the real YAML loader (issue 29; docs/rooms.md, "Training, step by step").
@Suite struct RoomsTrainingSectionTests: SectionLoading {
    @Test func noDeviceByDefaultAndValuesReachTheSettings() throws {
        let plain = try load(RoomsCalibrationSectionTests.site).get().rooms
        #expect(plain.training == TrainingSettings())
        #expect(plain.training.device == nil && plain.training.seconds == 60)
        let set = try load(
            RoomsCalibrationSectionTests.site + """
                  training: {device: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9", seconds: 2m}
                """
        ).get().rooms.training
        #expect(set.device == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:9")
        #expect(set.seconds == 120)
    }

    @Test func everyBadValueNamedAtOnce() {
        let lines = problems(
            RoomsCalibrationSectionTests.site + """
                  training:
                    device: ""
                    seconds: 601
                    walks: 3
                """
        ).joined(separator: "\n")
        for key in ["rooms.training.device", "rooms.training.seconds", "rooms.training.walks"] {
            #expect(lines.contains(key), "\(key) not named in:\n\(lines)")
        }
        #expect(lines.contains("1...600"))
    }
}
