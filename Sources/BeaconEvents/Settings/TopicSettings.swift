import BeaconConfigReading

/// The `topics` section: topic layout, per-kind QoS and retain, and the compatibility modes.
/// Every key is documented in docs/mqtt.md.
public struct TopicSettings: Sendable, Equatable {
    /// `topics.prefix`: first topic level; events go under `<prefix>/<gateway_id>/...`.
    public var prefix: String
    /// `topics.qos.<kind>` and `topics.retain.<kind>`.
    public var delivery: [EventKind: DeliveryPolicy]
    public var espresense: ESPresenseSettings
    public var homeAssistant: HomeAssistantSettings

    public init(
        prefix: String = "beaconbridge", delivery: [EventKind: DeliveryPolicy] = TopicSettings.defaultDelivery,
        espresense: ESPresenseSettings = ESPresenseSettings(),
        homeAssistant: HomeAssistantSettings = HomeAssistantSettings()
    ) {
        self.prefix = prefix
        self.delivery = delivery
        self.espresense = espresense
        self.homeAssistant = homeAssistant
    }

    /// Region and presence QoS 1 and retained (the last message on each topic is the current state);
    /// room decisions QoS 1 and retained too; sightings and ESPresense QoS 0, not retained (a stream of measurements); telemetry QoS 0, retained.
    public static let defaultDelivery: [EventKind: DeliveryPolicy] = [
        .sighting: DeliveryPolicy(qos: 0, retain: false),
        .presence: DeliveryPolicy(qos: 1, retain: true),
        .region: DeliveryPolicy(qos: 1, retain: true),
        .telemetry: DeliveryPolicy(qos: 0, retain: true),
        .espresense: DeliveryPolicy(qos: 0, retain: false),
        .room: DeliveryPolicy(qos: 1, retain: true),
    ]

    public func policy(for kind: EventKind) -> DeliveryPolicy {
        delivery[kind] ?? TopicSettings.defaultDelivery[kind] ?? DeliveryPolicy(qos: 0, retain: false)
    }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if let problem = TopicLayout.problem(inTopic: prefix, allowLevels: true) {
            issues.append(ConfigIssue(path: "topics.prefix", message: problem))
        }
        for kind in EventKind.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            if let policy = delivery[kind], policy.qos > 2 {
                issues.append(
                    ConfigIssue(
                        path: "topics.qos.\(kind.rawValue)",
                        message: "QoS must be 0, 1 or 2, got \(policy.qos)"))
            }
        }
        issues += espresense.validate()
        issues += homeAssistant.validate()
        return issues
    }
}
