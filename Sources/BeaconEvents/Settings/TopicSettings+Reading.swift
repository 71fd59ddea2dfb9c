import BeaconConfigReading

extension TopicSettings {
    /// The `topics:` section: prefix, per-kind `qos` and `retain`, `espresense` and `home_assistant`.
    public init(from r: inout ConfigReader) {
        self.init()
        prefix = r.string("prefix", default: prefix)
        var delivery = TopicSettings.defaultDelivery
        r.section("qos") { q in
            for kind in EventKind.allCases {
                if let qos = q.int(kind.rawValue, in: 0...2) {
                    delivery[kind, default: policy(for: kind)].qos = UInt8(qos)
                }
            }
        }
        r.section("retain") { t in
            for kind in EventKind.allCases {
                if let retain = t.value(kind.rawValue, as: Bool.self) {
                    delivery[kind, default: policy(for: kind)].retain = retain
                }
            }
        }
        self.delivery = delivery
        espresense = r.section("espresense") { e in
            let d = ESPresenseSettings()
            return ESPresenseSettings(
                enabled: e.bool("enabled", default: d.enabled), room: e.string("room"),
                prefix: e.string("prefix", default: d.prefix))
        }
        homeAssistant = r.section("home_assistant") { h in
            let d = HomeAssistantSettings()
            return HomeAssistantSettings(
                enabled: h.bool("enabled", default: d.enabled),
                discoveryPrefix: h.string("discovery_prefix", default: d.discoveryPrefix))
        }
    }
}
