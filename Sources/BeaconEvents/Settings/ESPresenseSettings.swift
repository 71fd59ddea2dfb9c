import BeaconConfigReading

/// `topics.espresense`: also publish sightings the way an ESPresense node does.
public struct ESPresenseSettings: Sendable, Equatable {
    /// `topics.espresense.enabled`.
    public var enabled: Bool
    /// `topics.espresense.room`: the room this gateway stands in (last topic level). Required when enabled.
    public var room: String?
    /// `topics.espresense.prefix`: ESPresense's root topic.
    public var prefix: String

    public init(enabled: Bool = false, room: String? = nil, prefix: String = "espresense") {
        self.enabled = enabled
        self.room = room
        self.prefix = prefix
    }

    public func validate() -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        if let problem = TopicLayout.problem(inTopic: prefix, allowLevels: true) {
            issues.append(ConfigIssue(path: "topics.espresense.prefix", message: problem))
        }
        if enabled {
            if let room {
                if let problem = TopicLayout.problem(inTopic: room, allowLevels: false) {
                    issues.append(ConfigIssue(path: "topics.espresense.room", message: problem))
                }
            } else {
                issues.append(
                    ConfigIssue(
                        path: "topics.espresense.room",
                        message: "required when topics.espresense.enabled is true"))
            }
        }
        return issues
    }
}
