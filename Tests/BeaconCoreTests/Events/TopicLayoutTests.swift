import Testing

@testable import BeaconDelivery
@testable import BeaconEvents
@testable import BeaconModel

@Suite struct TopicLayoutTests {
    @Test func levelsAreSanitised() {
        #expect(TopicLevel.safe("a/b+c#d") == "a_b_c_d")
        #expect(TopicLevel.safe("") == "_")
        // Multi-byte characters stay whole next to replaced ones; NUL is replaced too.
        #expect(TopicLevel.safe("Küche/Bad\u{0}#ß+🙂") == "Küche_Bad__ß_🙂")
        #expect(
            TopicLevel.safe("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
                == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        let layout = TopicLayout(settings: TopicSettings(prefix: "home/ble"), gatewayID: "gw/1")
        #expect(layout.availability == "home/ble/gw_1/availability")
        #expect(
            layout.region("living room", beaconID: "eddystone-url:https://x.y/z")
                == "home/ble/gw_1/region/living room/eddystone-url:https:__x.y_z")
    }

    @Test func slugsAreHomeAssistantSafe() {
        #expect(TopicLayout.slug("iBeacon:E2C5-01::7") == "ibeacon_e2c5_01_7")
        #expect(TopicLayout.slug("---") == "_")
    }

    @Test func validationNamesEveryBadKey() {
        var settings = TopicSettings(prefix: "bad/#")
        settings.delivery[.region] = DeliveryPolicy(qos: 3, retain: false)
        settings.espresense = ESPresenseSettings(enabled: true, room: nil)
        settings.homeAssistant.discoveryPrefix = ""
        #expect(
            settings.validate().map(\.path) == [
                "topics.prefix", "topics.qos.region", "topics.espresense.room",
                "topics.home_assistant.discovery_prefix",
            ])
        #expect(TopicSettings().validate().isEmpty)
    }

    @Test func mqttAndOutboxSettingsValidate() {
        #expect(MQTTSettings().validate().isEmpty)
        #expect(OutboxSettings().validate().isEmpty)
        let mqtt = MQTTSettings(
            host: "", port: 0, passwordFile: "/p", passwordEnv: "P", keepalive: 1,
            tls: MQTTTLSSettings(certFile: "c"), reconnectMin: 2, reconnectMax: 1, inflightWindow: 0)
        #expect(
            mqtt.validate().map(\.path) == [
                "mqtt.host", "mqtt.port", "mqtt.password_env", "mqtt.username", "mqtt.keepalive_s",
                "mqtt.reconnect_max_s",
                "mqtt.inflight_window", "mqtt.tls.ca_file", "mqtt.tls.key_file",
            ])
        let outbox = OutboxSettings(
            path: "", maxRows: 0, maxBytes: 10, sightingMaxAge: -1, batchSize: 0,
            memoryMaxRows: 0, synchronous: "off")
        #expect(outbox.validate().count == 7)
    }
}
