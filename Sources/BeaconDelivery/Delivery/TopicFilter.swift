/// An MQTT topic filter (`a/+/c`, `a/#`): which topics a subscription receives (MQTT 5.0 section 4.7).
public struct TopicFilter: Sendable, Hashable {
    public let filter: String
    private let levels: [Substring]

    public init(_ filter: String) {
        self.filter = filter
        levels = filter.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// Whether `topic` matches: `+` one level, `#` (last) this level and every level below; topics starting
    /// with `$` are not matched by a wildcard in the first level.
    public func matches(_ topic: String) -> Bool {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        if topic.hasPrefix("$"), let first = levels.first, first == "+" || first == "#" { return false }
        var index = 0
        for level in levels {
            if level == "#" { return true }
            guard index < parts.count else { return false }
            if level != "+" && level != parts[index] { return false }
            index += 1
        }
        return index == parts.count
    }
}
