/// Bounds on what the YAML loader accepts, so a hostile or broken file cannot exhaust memory or stack.
public struct YAMLLimits: Sendable, Equatable {
    /// Largest document in bytes (1 MiB by default).
    public var maxBytes: Int
    /// Most nodes after expanding aliases (guards against "billion laughs" alias bombs).
    public var maxNodes: Int
    /// Deepest nesting of lists and mappings.
    public var maxDepth: Int

    public init(maxBytes: Int = 1 << 20, maxNodes: Int = 100_000, maxDepth: Int = 64) {
        self.maxBytes = maxBytes
        self.maxNodes = maxNodes
        self.maxDepth = maxDepth
    }

    public static let standard = YAMLLimits()
}
