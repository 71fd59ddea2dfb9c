import BeaconRooms
import Testing

@testable import YAMLConfig

/// `rooms.calibration` through the real YAML loader (self-calibration, docs/rooms.md).
@Suite struct RoomsCalibrationSectionTests: SectionLoading {
    // The loader and problem lines of the `rooms` section's tests.

    static let site = """
        gateway: {id: gw-hall, room: hall}
        rooms:
          enabled: true
          gateways: {gw-kitchen: kitchen, gw-office: office}

        """

    @Test func onWithRoomsByDefaultAndOffWithout() throws {
        let on = try load(Self.site).get().rooms
        #expect(on.calibrates && on.advertisesIdentity)
        #expect(on.calibration == CalibrationSettings())
        let off = try load("gateway: {id: gw-hall}\n").get().rooms
        #expect(!off.calibrates && !off.advertisesIdentity)
    }

    @Test func valuesReachTheSettings() throws {
        let rooms = try load(
            Self.site + """
                  calibration:
                    advertise: false
                    interval_ms: 250
                    tx_power_dbm: -8
                    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
                    window_s: 2m
                    solve_interval_s: 5
                    hand_offsets: fallback
                """
        ).get().rooms
        let calibration = rooms.calibration
        #expect(rooms.calibrates && !rooms.advertisesIdentity)
        #expect(calibration.intervalMilliseconds == 250 && calibration.txPower == -8)
        #expect(calibration.uuid == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(calibration.window == 120 && calibration.solveInterval == 5)
        #expect(calibration.handOffsets == .fallback)
        #expect(calibration.solverSettings.window == 120)
    }

    @Test func turnedOff() throws {
        let rooms = try load(Self.site + "  calibration: {enabled: false}\n").get().rooms
        #expect(rooms.enabled && !rooms.calibrates && !rooms.advertisesIdentity)
    }

    @Test func everyBadValueNamedAtOnce() {
        let lines = problems(
            Self.site + """
                  calibration:
                    interval_ms: 10
                    tx_power_dbm: 30
                    uuid: not-a-uuid
                    window_s: 5
                    solve_interval_s: 0
                    hand_offsets: sometimes
                    advertise: maybe
                    colour: blue
                """
        ).joined(separator: "\n")
        for key in [
            "rooms.calibration.interval_ms", "rooms.calibration.tx_power_dbm", "rooms.calibration.uuid",
            "rooms.calibration.window_s", "rooms.calibration.solve_interval_s", "rooms.calibration.hand_offsets",
            "rooms.calibration.advertise", "rooms.calibration.colour",
        ] {
            #expect(lines.contains(key), "\(key) not named in:\n\(lines)")
        }
        #expect(lines.contains("10240"))
    }

    @Test func identitiesAreStableAndDistinct() {
        let settings = CalibrationSettings()
        let a = CalibrationSettings.identity(of: "gw-a")
        #expect(a == CalibrationSettings.identity(of: "gw-a"))
        #expect(a != CalibrationSettings.identity(of: "gw-b"))
        // FNV-1a 32 of "a" is 0xE40C292C.
        #expect(CalibrationSettings.identity(of: "a") == (0xE40C, 0x292C))
        #expect(settings.beaconID(of: "a") == "ibeacon:\(CalibrationSettings.defaultUUID):58380:10540")
        #expect(settings.identities(of: ["gw-a", "gw-b"]).count == 2)
        #expect(settings.validate(gateways: ["gw-a", "gw-b", "gw-c"]).isEmpty)
    }
}
