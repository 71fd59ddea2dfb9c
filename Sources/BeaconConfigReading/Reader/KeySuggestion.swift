/// "Did you mean `x`?" for unknown configuration keys and values.
public enum KeySuggestion {
    /// The closest candidate to `word`, or nil when none is close enough to be a plausible typo.
    ///
    /// Keys are compared after folding case and dropping `_` and `-` (so `intervalS` and `interval-s` both
    /// find `interval_s`), by optimal-string-alignment edit distance (a swap of two neighbours counts once).
    /// A candidate qualifies within 1 edit for short words, 2 up to 8 characters, 3 beyond.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let folded = fold(word)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let d = distance(folded, fold(candidate))
            if d <= threshold(for: folded.count), best == nil || d < best!.distance {
                best = (candidate, d)
            }
        }
        return best?.candidate
    }

    /// The hint text appended to a message, e.g. "; did you mean `interval_s`?", or "".
    public static func hint(for word: String, among candidates: [String]) -> String {
        guard let match = closest(to: word, among: candidates) else { return "" }
        return "; did you mean `\(match)`?"
    }

    package static func threshold(for length: Int) -> Int {
        switch length {
        case ..<4: 1
        case ..<9: 2
        default: 3
        }
    }

    static func fold(_ word: String) -> [Character] {
        word.lowercased().filter { $0 != "_" && $0 != "-" }.map { $0 }
    }

    /// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
    public static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Bounded: configuration keys are short; cap the work for pathological inputs.
        if a.count > 256 || b.count > 256 { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
