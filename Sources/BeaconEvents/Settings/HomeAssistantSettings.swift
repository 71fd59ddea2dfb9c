import BeaconConfigReading

/// `topics.home_assistant`: Home Assistant MQTT discovery.
public struct HomeAssistantSettings: Sendable, Equatable {
    /// `topics.home_assistant.enabled`.
    public var enabled: Bool
    /// `topics.home_assistant.discovery_prefix`: Home Assistant's discovery prefix; its birth topic is
    /// `<discovery_prefix>/status`.
    public var discoveryPrefix: String

    public init(enabled: Bool = false, discoveryPrefix: String = "homeassistant") {
        self.enabled = enabled
        self.discoveryPrefix = discoveryPrefix
    }

    public func validate() -> [ConfigIssue] {
        guard let problem = TopicLayout.problem(inTopic: discoveryPrefix, allowLevels: true) else { return [] }
        return [ConfigIssue(path: "topics.home_assistant.discovery_prefix", message: problem)]
    }
}
