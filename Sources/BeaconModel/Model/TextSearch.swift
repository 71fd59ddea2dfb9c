/// Substring search without the standard library's `contains(_: some StringProtocol)`, `firstRange(of:)` and
/// `replacing(_:with:)`: those live in _StringProcessing, and calling any of them links it and the regex parser into
/// the gateway for a handful of message checks (without them the release binary's text is 1.25 MB smaller and a
/// gateway's RSS 0.4-0.7 MB lower: docs/daemon-bench.md, session 22). Compared by UTF-8 bytes, which is exact for the
/// ASCII markers and names these are used with.
extension StringProtocol {
    /// Whether `text` occurs in this string (an empty `text` always does).
    package func includes(_ text: some StringProtocol) -> Bool { range(ofText: text) != nil }

    /// The first occurrence of `text`, or nil.
    package func range(ofText text: some StringProtocol) -> Range<String.Index>? {
        utf8.firstRange(ofElements: text.utf8)
    }

    /// This string with every occurrence of `text` (left to right, not overlapping) replaced by `replacement`.
    package func replacingText(_ text: some StringProtocol, with replacement: String) -> String {
        guard !text.isEmpty else { return String(self) }
        var out = ""
        var rest = self[...]
        while let found = rest.range(ofText: text) {
            out += rest[..<found.lowerBound]
            out += replacement
            rest = rest[found.upperBound...]
        }
        out += rest
        return out
    }
}

extension Collection where Element: Equatable {
    /// The first occurrence of `needle` as consecutive elements, or nil (an empty `needle` occurs at the start).
    /// Named apart from the standard library's `firstRange(of:)`, which is _StringProcessing's (see above). A plain
    /// scan: the haystacks are advertisement payloads and short messages, where it beats any preprocessing.
    @inlinable
    package func firstRange<Needle: Collection>(ofElements needle: Needle) -> Range<Index>?
    where Needle.Element == Element {
        guard let first = needle.first else { return startIndex..<startIndex }
        var start = startIndex
        while let candidate = self[start...].firstIndex(of: first) {
            var end = candidate
            var matched = needle.startIndex
            while matched != needle.endIndex, end != endIndex, self[end] == needle[matched] {
                formIndex(after: &end)
                needle.formIndex(after: &matched)
            }
            if matched == needle.endIndex { return candidate..<end }
            start = index(after: candidate)
        }
        return nil
    }
}
