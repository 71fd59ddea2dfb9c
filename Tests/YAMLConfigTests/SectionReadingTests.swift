import BeaconConfigReading
import BeaconDelivery
import BeaconEvents
import BeaconTracking
import Testing

@testable import YAMLConfig

/// Every section through the real YAML loader: values land in the owners' settings structs, and problems come
/// out with their line, column and key path.
@Suite struct SectionReadingTests: SectionLoading {
    let hostname = "pi-hall.lan"
    static let environment = ConfigEnvironment(hostname: "pi-hall.lan")

    @Test func valuesReachTheSettings() throws {
        let c = try load(
            """
            gateway: {room: hall}
            scanner: {adapter: "0", active: off, interval_ms: 60, window_ms: 30, extended: "off",
                      stall_timeout_s: 2m, source: "replay:/tmp/x.btsnoop", replay_speed: 10}
            formats: {enabled: [ibeacon], layouts: [{name: tag, layout: "m:2-3=beac,i:4-19"}], include_devices: yes}
            distance: {model: path_loss, path_loss_exponent: 3, measured_power: {ibeacon: -62, tag: -70}}
            tracking: {away_timeout_s: 2m, filter: median-iqr, publish: {sighting_interval_s: 500ms}}
            regions:
              - name: door
                match: {format: ibeacon, uuid: 2F234454CF6D4A0FADF2F4911BA9FFA6, major: 7}
                enter: {distance_below: 1.5}
                exit_period_s: 1m
                filter: {kind: running-average, window_s: 10s, max_samples: 32}
            beacons: [{id: "tag:00112233445566778899aabbccddeeff"}]
            mqtt: {host: broker.lan, port: 8883, username: gw, password_env: MQTT_PW, keepalive_s: 1m, protocol: 5,
                   tls: true, reconnect_max_s: 2m}
            topics: {prefix: home/ble, qos: {sighting: 1}, retain: {telemetry: false}, espresense: {enabled: true}}
            outbox: {max_bytes: 64MiB, sighting_max_age_s: 2m, synchronous: full}
            """
        ).get()
        #expect(c.gateway.id == "pi-hall")
        #expect(c.scanner.adapter == "0" && !c.scanner.active && c.scanner.extended == .off)
        #expect(c.scanner.stallTimeoutSeconds == 120 && c.scanner.source == .replay(path: "/tmp/x.btsnoop"))
        #expect(c.formats.enabled == ["ibeacon"] && c.formats.layouts.first?.name == "tag" && c.formats.includeDevices)
        #expect(c.distance.model == .pathLoss && c.distance.measuredPower == ["ibeacon": -62, "tag": -70])
        #expect(c.tracking.awayTimeout == 120 && c.tracking.filter == .medianIQR)
        #expect(c.tracking.publish.sightingInterval == 0.5)
        let region = try #require(c.regions.first)
        #expect(
            region.match == RegionMatch(format: "ibeacon", identifiers: ["2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "7"]))
        #expect(region.enter == .distance(1.5) && region.exit == nil && region.exitPeriod == 60)
        #expect(region.filter == FilterSettings(kind: .runningAverage, window: 10, maxSamples: 32))
        #expect(c.beacons == [KnownBeacon(id: "tag:00112233445566778899aabbccddeeff")])
        #expect(c.mqtt.keepalive == 60 && c.mqtt.protocolVersion == .v5 && c.mqtt.reconnectMax == 120)
        #expect(c.mqtt.tls == MQTTTLSSettings(caDir: "/etc/ssl/certs"))
        #expect(c.topics.policy(for: .sighting) == DeliveryPolicy(qos: 1, retain: false))
        #expect(c.topics.policy(for: .telemetry) == DeliveryPolicy(qos: 0, retain: false))
        #expect(c.topics.policy(for: .region) == DeliveryPolicy(qos: 1, retain: true))
        #expect(c.topics.espresense.room == "hall")
        #expect(c.outbox.maxBytes == 64 << 20 && c.outbox.sightingMaxAge == 120 && c.outbox.synchronous == "full")
    }

    @Test func sensitivityPresetsSetTheTimingKeys() throws {
        let c = try load(
            """
            tracking: {sensitivity: steady}
            regions:
              - {name: a, match: {}, enter: {rssi_above: -70}}
              - {name: b, match: {}, enter: {rssi_above: -70}, sensitivity: fast, exit_period_s: 40}
              - {name: c, match: {}, enter: {rssi_above: -70}, sensitivity: balanced, fast_enter_margin_db: 7}
            """
        ).get()
        #expect(c.tracking.sensitivity == .steady)
        let (a, b, cc) = (c.regions[0], c.regions[1], c.regions[2])
        // a inherits steady: no fast path, 60 dB·s, 45 s exit period.
        #expect(a.sensitivity == nil && a.fastEnterEvidence == 0 && a.enterEvidence == 60 && a.exitPeriod == 45)
        // b is fast except for the exit period it sets itself.
        #expect(b.sensitivity == .fast && b.fastEnterEvidence == 6 && b.fastEnterMargin == 4 && b.exitPeriod == 40)
        #expect(b.enterEvidence == 15 && b.enterMargin == 2)
        #expect(cc.fastEnterEvidence == 10 && cc.fastEnterMargin == 7 && cc.enterEvidence == 30)
        #expect(
            problems("tracking: {sensitivity: quick}\n") == [
                "t.yaml:1:25: tracking.sensitivity: `quick` is not one of fast, balanced, steady"
            ])
        #expect(
            problems(
                "regions:\n  - name: r\n    match: {}\n    enter: {rssi_above: -70}\n    fast_enter_margin_db: 2\n"
            ) == ["t.yaml:5:27: regions[0].fast_enter_margin_db: must be at least enter_margin_db (3.5), got 2.0"])
    }

    @Test func ownersValidationIsPlacedAtTheKey() {
        #expect(
            problems("scanner:\n  interval_ms: 50\n  window_ms: 80\n") == [
                "t.yaml:3:14: scanner.window_ms: must not exceed interval_ms (80.0 > 50.0)"
            ])
        #expect(
            problems("mqtt:\n  port: 99999\n") == [
                "t.yaml:2:9: mqtt.port: must be between 1 and 65535, got 99999"
            ])
        // Absent key: placed at the nearest node that exists (the section).
        #expect(
            problems("mqtt:\n  password_file: /p\n") == [
                "t.yaml:2:3: mqtt.username: required with a password"
            ])
    }

    @Test func aValueThatFailedToReadIsNotReportedTwice() {
        // `name` is missing (reader) and empty (the owner's validate): one message.
        #expect(
            problems("regions:\n  - match: {}\n") == [
                "t.yaml:2:5: regions[0].name: missing required key `name` (a string)"
            ])
        #expect(
            problems("tracking:\n  away_timeout_s: soon\n") == [
                "t.yaml:2:19: tracking.away_timeout_s: `soon` is not a duration (use e.g. 30s, 500ms, 2m or 1h)"
            ])
    }

    @Test func filterParametersMustFitTheKind() {
        #expect(
            problems("tracking:\n  filter: {kind: kalman, window_s: 10}\n") == [
                "t.yaml:2:36: tracking.filter.window_s: has no effect with kind `kalman` (it applies to running-average, "
                    + "median-iqr)"
            ])
        #expect(
            problems("tracking:\n  filter: kalmann\n") == [
                "t.yaml:2:11: tracking.filter: `kalmann` is not one of running-average, kalman, median-iqr; did you mean "
                    + "`kalman`?"
            ])
    }

    @Test func regionConditionsAndMatch() {
        #expect(
            problems(
                """
                regions:
                  - name: a
                    match: {identifiers: [x], major: 1}
                    enter: {rssi_above: -70, distance_below: 2}
                  - name: b
                    match: {format: ibeacn}
                    exit: {rssi_below: -80}
                  - name: a
                    match: {}
                    enter: {}
                """) == [
                    "t.yaml:3:38: regions[0].match.major: use either `identifiers` or `uuid`/`major`/`minor`",
                    "t.yaml:4:46: regions[0].enter.distance_below: set either `rssi_above` or `distance_below`, not both",
                    "t.yaml:6:21: regions[1].match.format: unknown format `ibeacn`; did you mean `ibeacon`? (built-in formats "
                        + "and formats.layouts names)",
                    "t.yaml:7:11: regions[1].exit: an exit condition needs an enter condition",
                    "t.yaml:8:11: regions[2].name: duplicate region name 'a' (also regions[0])",
                    "t.yaml:10:12: regions[2].enter: needs `rssi_above` or `distance_below`",
                ])
    }

    @Test func beaconsAndCrossReferences() {
        #expect(
            problems(
                """
                formats: {layouts: [{name: tag, layout: "m:2-3=beac,i:4-19"}]}
                beacons:
                  - {id: "tag:0011", name: Keys}
                  - {id: "tga:0011"}
                  - {id: "tag:0011"}
                distance: {measured_power: {tga: -60}}
                """) == [
                    "t.yaml:4:10: beacons[1].id: unknown format `tga`; did you mean `tag`? (built-in formats and "
                        + "formats.layouts names)",
                    "t.yaml:5:10: beacons[2].id: duplicate beacon id (also beacons[0])",
                    "t.yaml:6:34: distance.measured_power.tga: unknown format `tga`; did you mean `tag`? (built-in formats "
                        + "and formats.layouts names)",
                ])
    }

    @Test func mqttSecretsAndTLS() {
        #expect(
            problems("mqtt:\n  username: gw\n  password: hunter2\n  keepalive_s: 2.5\n  tls: {cert_file: /c}\n") == [
                "t.yaml:3:13: mqtt.password: a password does not belong in the configuration file: put it in a file "
                    + "(`password_file`) or an environment variable (`password_env`)",
                "t.yaml:4:16: mqtt.keepalive_s: must be a whole number of seconds (got 2.5s)",
                "t.yaml:5:8: mqtt.tls.key_file: cert_file and key_file go together",
            ])
        #expect(problems("mqtt: {tls: false}") == [])
        #expect(
            problems("mqtt: {tls: maybe}") == ["t.yaml:1:13: mqtt.tls: `maybe` is not a boolean (use true or false)"])
    }

    @Test func topicsAndOutbox() {
        #expect(
            problems(
                """
                topics:
                  prefix: "a/#"
                  qos: {presence: 3, sightings: 0}
                  espresense: {enabled: true}
                outbox: {max_bytes: 1KB, batch_size: 0}
                """) == [
                    "t.yaml:2:11: topics.prefix: must not contain MQTT wildcards (+ or #)",
                    "t.yaml:3:19: topics.qos.presence: must be between 0 and 2 (got 3)",
                    "t.yaml:3:22: topics.qos.sightings: unknown key `sightings`; did you mean `sighting`?",
                    "t.yaml:4:15: topics.espresense.room: required when topics.espresense.enabled is true",
                    "t.yaml:5:21: outbox.max_bytes: must be at least 1024",
                    "t.yaml:5:38: outbox.batch_size: must be between 1 and 10000",
                ])
    }

    @Test func referencedFilesAreChecked() throws {
        let yaml = """
            scanner: {source: "replay:/nonexistent/capture.btsnoop"}
            mqtt:
              username: gw
              password_file: /run/credentials/beaconbridge.service/mqtt-password
              tls: {ca_file: ca.pem, ca_dir: /etc/hostname}
            """
        let result = ConfigurationLoader.load(yaml: yaml, file: "t.yaml", environment: Self.environment)
        guard case .failure(let errors) = result else {
            Issue.record("expected problems")
            return
        }
        #expect(
            errors.lines == [
                "t.yaml:1:19: scanner.source: `/nonexistent/capture.btsnoop` does not exist",
                "t.yaml:5:18: mqtt.tls.ca_file: `ca.pem` must be an absolute path (the service runs from /)",
                "t.yaml:5:34: mqtt.tls.ca_dir: `/etc/hostname` is not a directory",
            ])
    }

    @Test func beaconIdsMustBeCanonical() {
        #expect(
            problems(
                """
                beacons:
                  - {id: "ibeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:01:7"}
                  - {id: "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1"}
                  - {id: "eddystone-uid:0x00010203040506070809:0A0B0C0D0E0F"}
                  - {id: "eddystone-tlm:c0:ff:ee:00:11:22"}
                  - {id: "mac:C0:FF:EE:00:11:22"}
                  - {id: "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:7"}
                """) == [
                    "t.yaml:2:10: beacons[0].id: ids are written as events carry them: did you mean "
                        + "`ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:7`?",
                    "t.yaml:3:10: beacons[1].id: `ibeacon` ids look like ibeacon:<uuid>:<0-65535>:<0-65535>",
                    "t.yaml:4:10: beacons[2].id: ids are written as events carry them: did you mean "
                        + "`eddystone-uid:00010203040506070809:0a0b0c0d0e0f`?",
                    "t.yaml:5:10: beacons[3].id: ids are written as events carry them: did you mean "
                        + "`eddystone-tlm:C0:FF:EE:00:11:22`?",
                ])
    }

    @Test func referencesToDisabledFormatsAreReported() {
        #expect(
            problems(
                """
                formats: {enabled: [ibeacon]}
                regions: [{name: a, match: {format: eddystone-uid}}]
                distance: {measured_power: {ibeacon: -60, exposure-notification: -59}}
                """) == [
                    "t.yaml:2:37: regions[0].match.format: format `eddystone-uid` is not in formats.enabled, so nothing would "
                        + "ever match it",
                    "t.yaml:3:66: distance.measured_power.exposure-notification: format `exposure-notification` is not in "
                        + "formats.enabled, so nothing would ever match it",
                ])
    }
}
