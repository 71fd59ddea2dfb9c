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
        let needle = Array(text.utf8)
        guard let first = needle.first else { return startIndex..<startIndex }
        var index = utf8.startIndex
        while index != utf8.endIndex {
            if utf8[index] == first {
                var end = index
                var matched = 0
                while matched < needle.count, end != utf8.endIndex, utf8[end] == needle[matched] {
                    utf8.formIndex(after: &end)
                    matched += 1
                }
                if matched == needle.count { return index..<end }
            }
            utf8.formIndex(after: &index)
        }
        return nil
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
