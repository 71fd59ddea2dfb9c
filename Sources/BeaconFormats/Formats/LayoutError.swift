/// A layout string that cannot be parsed: names the offending term by its 1-based position and text.
public struct LayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based position of the term in the comma-separated layout.
    public var termNumber: Int
    /// The term's text as written.
    public var term: String
    public var reason: String

    public init(termNumber: Int, term: String, reason: String) {
        self.termNumber = termNumber
        self.term = term
        self.reason = reason
    }

    public var description: String { "term \(termNumber) '\(term)': \(reason)" }
}
