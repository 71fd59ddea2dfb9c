/// A configuration document as a tree, independent of the YAML library that produced it.
///
/// The YAML adapter (module YAMLConfig) builds it with a `SourceMark` on every node and key; tests can build
/// one in code with the static helpers below. Scalars keep their raw text:
/// the meaning of `yes`, `010` or `30s` is decided by the section that reads the key (see `ConfigReader`),
/// never by the YAML schema, so `room: no` stays the string "no".
public struct ConfigNode: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// An explicit null: a plain empty value, `~`, `null`, or a `!!null` tag.
        case null
        case scalar(ConfigScalar)
        case sequence([ConfigNode])
        /// Keys in document order; keys are unique (the adapter reports duplicates).
        case mapping([ConfigEntry])
    }

    public var content: Content
    public var mark: SourceMark

    public init(_ content: Content, mark: SourceMark = .unknown) {
        self.content = content
        self.mark = mark
    }

    public static func null(at mark: SourceMark = .unknown) -> ConfigNode { ConfigNode(.null, mark: mark) }

    public static func scalar(
        _ text: String, style: ConfigScalar.Style = .plain, tag: String? = nil,
        at mark: SourceMark = .unknown
    ) -> ConfigNode {
        ConfigNode(.scalar(ConfigScalar(text, style: style, tag: tag)), mark: mark)
    }

    public static func sequence(_ items: [ConfigNode], at mark: SourceMark = .unknown) -> ConfigNode {
        ConfigNode(.sequence(items), mark: mark)
    }

    public static func mapping(_ entries: [ConfigEntry], at mark: SourceMark = .unknown) -> ConfigNode {
        ConfigNode(.mapping(entries), mark: mark)
    }

    /// A mapping from literal pairs without marks (for tests).
    public static func mapping(_ pairs: KeyValuePairs<String, ConfigNode>) -> ConfigNode {
        ConfigNode(.mapping(pairs.map { ConfigEntry(key: $0.key, value: $0.value) }))
    }

    /// What the node is, for messages: "a mapping", "a list", "a scalar", "null".
    public var kindDescription: String {
        switch content {
        case .null: "an empty value"
        case .scalar: "a single value"
        case .sequence: "a list"
        case .mapping: "a mapping"
        }
    }

    public var scalar: ConfigScalar? {
        if case .scalar(let s) = content { return s }
        return nil
    }

    public var entries: [ConfigEntry]? {
        if case .mapping(let e) = content { return e }
        return nil
    }

    public var items: [ConfigNode]? {
        if case .sequence(let i) = content { return i }
        return nil
    }

    public var isNull: Bool {
        if case .null = content { return true }
        return false
    }

    /// The entry for `key` in a mapping node.
    public func entry(_ key: String) -> ConfigEntry? {
        entries?.first { $0.key == key }
    }

    /// The number of nodes in this tree (this one included).
    public var nodeCount: Int {
        switch content {
        case .null, .scalar: 1
        case .sequence(let items): items.reduce(1) { $0 + $1.nodeCount }
        case .mapping(let entries): entries.reduce(1) { $0 + $1.value.nodeCount }
        }
    }
}
