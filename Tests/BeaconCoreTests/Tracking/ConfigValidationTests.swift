import Testing

@testable import BeaconConfigReading
@testable import BeaconTracking

@Suite struct ConfigValidationTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    @Test func defaultsAreValid() {
        #expect(TrackerSettings.default.validate().isEmpty)
        #expect(
            RegionRule.validate([RegionRule(name: "hall", match: .iBeacon(uuid: Self.uuid), enter: .rssi(-70))]).isEmpty
        )
        for kind in FilterSettings.Kind.allCases { #expect(FilterSettings(kind: kind).validate(path: "f").isEmpty) }
    }

    @Test func regionProblemsNameTheirKeyPaths() {
        let rules = [
            RegionRule(name: "hall", match: .iBeacon(uuid: Self.uuid), enter: .rssi(-70)),
            RegionRule(name: "desk", match: .iBeacon(uuid: Self.uuid), enter: .distance(2)),
            RegionRule(
                name: "hall", match: .iBeacon(uuid: "not-a-uuid", major: nil), enter: .rssi(-70), exit: .rssi(-65),
                minDwell: -1, exitPeriod: 0),
            RegionRule(name: "lab", match: .eddystone(namespace: "0x1234"), enter: .distance(-3), exit: .rssi(-90)),
            RegionRule(
                name: "a/b", match: RegionMatch(), enter: .distance(3), exit: .distance(2),
                filter: FilterSettings(kind: .medianIQR, window: 0)),
        ]
        let paths = Set(RegionRule.validate(rules).map(\.path))
        #expect(
            paths == [
                "regions[2].name", "regions[2].match.identifiers[0]", "regions[2].exit.rssi_below",
                "regions[2].min_dwell_s",
                "regions[2].exit_period_s", "regions[3].match.identifiers[0]", "regions[3].enter.distance_below",
                "regions[3].exit", "regions[4].name", "regions[4].exit.distance_above", "regions[4].filter.window_s",
            ])
    }

    @Test func duplicateNamePointsAtTheFirstOne() {
        let rule = RegionRule(name: "hall", match: RegionMatch(), enter: .rssi(-70))
        let issues = RegionRule.validate([rule, rule])
        #expect(
            issues == [ConfigIssue(path: "regions[1].name", message: "duplicate region name 'hall' (also regions[0])")])
    }

    @Test func trackerSettingsProblems() {
        let settings = TrackerSettings(
            maxBeacons: 0, awayTimeout: -1, restoreMaxAge: .nan, statePersistInterval: 0,
            filter: FilterSettings(kind: .kalman, processNoise: 0),
            publish: PublishPolicy(sightingInterval: -1, sightingMinDistance: 0))
        #expect(
            Set(settings.validate().map(\.path)) == [
                "tracker.max_beacons", "tracker.away_timeout_s", "tracker.restore_max_age_s",
                "tracker.state_persist_interval_s", "tracker.filter.process_noise",
                "tracker.publish.sighting_interval_s",
                "tracker.publish.sighting_min_distance_m",
            ])
    }

    @Test func derivedExitIsLooser() {
        #expect(RegionCondition.rssi(-70).defaultExit == .rssi(-75))
        #expect(RegionCondition.distance(2).defaultExit == .distance(3))
        let rule = RegionRule(name: "x", match: RegionMatch(), enter: .distance(4))
        #expect(rule.effectiveExit == .distance(6))
    }
}
