/// The text of a scalar as written, with its style and explicit tag.
public struct ConfigScalar: Sendable, Equatable {
    public enum Style: Sendable, Equatable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    public var text: String
    public var style: Style
    /// The resolved explicit tag, e.g. `tag:yaml.org,2002:str` for `!!str`; nil when none was written.
    public var tag: String?

    public init(_ text: String, style: Style = .plain, tag: String? = nil) {
        self.text = text
        self.style = style
        self.tag = tag
    }

    public var isQuoted: Bool { style != .plain }
}
