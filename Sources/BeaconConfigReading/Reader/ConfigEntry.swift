/// One key of a mapping with the place of the key itself.
public struct ConfigEntry: Sendable, Equatable {
    public var key: String
    public var keyMark: SourceMark
    public var value: ConfigNode

    public init(key: String, keyMark: SourceMark = .unknown, value: ConfigNode) {
        self.key = key
        self.keyMark = keyMark
        self.value = value
    }
}
