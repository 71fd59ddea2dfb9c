import BeaconModel

/// Reads one mapping of a configuration document into typed settings, collecting every problem instead of
/// stopping at the first.
///
/// A section owner writes a decoder as an initialiser over `inout ConfigReader`:
///
/// ```swift
/// extension TelemetrySettings {
///     init(from r: inout ConfigReader) {
///         self.init()
///         interval = r.duration("interval_s", default: interval, in: 1...86_400)
///     }
/// }
/// ```
///
/// Every accessor marks its key as known; when the section's closure returns, keys that nobody read are
/// reported as unknown, with a "did you mean" hint against the known ones. Accessors never fail: on a problem
/// they record an issue (file, line, column, key path, message) and return the default, so decoding always
/// produces a complete value and the caller decides from `issues` whether to use it.
/// An empty value (`key:` or `key: null`) counts as absent: the default applies.
/// See docs/configuration-reading.md.
public struct ConfigReader {
    /// The file being read, for issue locations.
    public let file: String?
    /// Where this section sits in the document.
    public let path: ConfigPath
    /// Where to report problems about the section as a whole (a missing key): the section's key, or its
    /// first line.
    public let mark: SourceMark
    /// The section's entries in document order.
    public let entries: [ConfigEntry]
    /// All issues found so far in this section and the sections it read.
    public private(set) var issues: [ConfigIssue] = []
    /// Keys read or declared, in first-use order.
    public private(set) var knownKeys: [String] = []
    /// True when the section was not a mapping (already reported): missing-key errors are not repeated.
    public let isStandIn: Bool
    /// This section's place in the schema: like `path`, with `[]` for any list index and `*` for a
    /// user-chosen name (`regions[].enter`, `formats.*`).
    public let schemaPath: String
    /// Every key read or declared by this section and the sections it read, as schema paths
    /// (`regions[].enter.rssi_above`): the keys this build understands, for docs and tests.
    public internal(set) var knownSchemaPaths: Set<String> = []
    private var reportedUnknown: Set<String> = []

    /// A reader over `node`, which should be a mapping. A null node reads as an empty mapping; any other
    /// node is reported and read as an empty mapping.
    public init(
        _ node: ConfigNode, file: String? = nil, path: ConfigPath = .root, mark: SourceMark? = nil,
        schemaPath: String? = nil
    ) {
        self.file = file
        self.path = path
        self.schemaPath = schemaPath ?? ConfigReader.schemaPath(of: path)
        self.mark = mark ?? node.mark
        switch node.content {
        case .mapping(let entries):
            self.entries = entries
            self.isStandIn = false
        case .null:
            self.entries = []
            self.isStandIn = false
        case .scalar, .sequence:
            self.entries = []
            self.isStandIn = true
            issues.append(
                Self.issue(
                    file: file, path: path, at: node.mark,
                    "expected a mapping of keys, found \(node.kindDescription)"))
        }
    }

    /// Reads a whole document: runs `body` on the root mapping, checks for unknown keys and returns the value
    /// with every issue, sorted by place.
    public static func read<T>(
        _ root: ConfigNode, file: String? = nil,
        _ body: (inout ConfigReader) -> T
    ) -> (value: T, issues: [ConfigIssue]) {
        var reader = ConfigReader(root, file: file)
        let value = body(&reader)
        reader.reportUnknownKeys()
        reader.hintMisplacedKeys()
        return (value, sortedByPlace(reader.issues))
    }

    // MARK: Keys

    /// Marks keys as known without reading them (keys read only in some configurations).
    public mutating func declare(_ keys: String...) { declare(keys) }

    public mutating func declare(_ keys: [String]) {
        for key in keys where !knownKeys.contains(key) {
            knownKeys.append(key)
            knownSchemaPaths.insert(schemaPath.isEmpty ? key : schemaPath + "." + key)
        }
    }

    /// `regions[2].enter` -> `regions[].enter`.
    package static func schemaPath(of path: ConfigPath) -> String {
        var out = ""
        for component in path.components {
            switch component {
            case .index: out += "[]"
            case .key(let key): out += (out.isEmpty ? "" : ".") + key
            }
        }
        return out
    }

    /// Accepts keys without reading them and without making them part of the schema (e.g. top-level `x-...`
    /// keys that only hold YAML anchors).
    public mutating func ignore(_ keys: [String]) {
        for key in keys where !knownKeys.contains(key) { knownKeys.append(key) }
    }

    /// Whether the key is present with a non-empty value. Does not mark it known.
    public func has(_ key: String) -> Bool {
        guard let entry = entries.first(where: { $0.key == key }) else { return false }
        return !entry.value.isNull
    }

    /// The entry for `key`, marked known; nil when absent.
    public mutating func entry(_ key: String) -> ConfigEntry? {
        declare(key)
        return entries.first { $0.key == key }
    }

    /// The raw node for `key`, marked known; nil when absent or empty.
    public mutating func node(_ key: String) -> ConfigNode? {
        guard let entry = entry(key), !entry.value.isNull else { return nil }
        return entry.value
    }

    /// The place of `key`'s value (or of the key itself when its value is empty), else of the section.
    public func mark(of key: String) -> SourceMark {
        guard let entry = entries.first(where: { $0.key == key }) else { return mark }
        return entry.value.isNull || !entry.value.mark.isKnown ? entry.keyMark : entry.value.mark
    }

    // MARK: Issues

    /// Records a problem about `key` (at its value) or, with no key, about the section.
    public mutating func issue(_ message: String, key: String? = nil) {
        let at = key.map { mark(of: $0) } ?? mark
        let issuePath = key.map { path.appending($0) } ?? path
        issues.append(Self.issue(file: file, path: issuePath, at: at, message))
    }

    /// Adopts issues found by validation code that knows only key paths relative to this section (for example
    /// a settings struct's `validate()`): each is placed at the deepest node of its path that exists.
    /// An issue is dropped when this reader already reported one at the same path or at an ancestor (a value
    /// that failed to read was replaced by its default, so the validator's view of it says nothing new).
    public mutating func report(_ relative: [ConfigIssue]) {
        for item in relative {
            let sub = ConfigPath(parsing: item.path)
            let full = ConfigPath(path.components + sub.components)
            let text = full.description
            let covered = issues.contains { existing in
                existing.path == text || text.hasPrefix(existing.path + ".") || text.hasPrefix(existing.path + "[")
            }
            if covered { continue }
            issues.append(Self.issue(file: file, path: full, at: locate(sub) ?? mark, item.message))
        }
    }

    /// Records a problem at an explicit place and path (for decoders that walk raw nodes themselves).
    public mutating func issue(_ message: String, path issuePath: ConfigPath, at place: SourceMark) {
        issues.append(Self.issue(file: file, path: issuePath, at: place, message))
    }

    /// Adds issues found elsewhere (so that `report` does not repeat them).
    public mutating func absorbIssues(_ other: [ConfigIssue]) { issues.append(contentsOf: other) }

    package mutating func absorb(_ other: ConfigReader) {
        issues.append(contentsOf: other.issues)
        knownSchemaPaths.formUnion(other.knownSchemaPaths)
    }

    /// Reports every key that was neither read nor declared.
    public mutating func reportUnknownKeys(hintingAmong extra: [String] = []) {
        let candidates = knownKeys + extra.filter { !knownKeys.contains($0) }
        for entry in entries where !knownKeys.contains(entry.key) && !reportedUnknown.contains(entry.key) {
            reportedUnknown.insert(entry.key)
            let hint = KeySuggestion.hint(for: entry.key, among: candidates)
            issues.append(
                Self.issue(
                    file: file, path: path.appending(entry.key), at: entry.keyMark,
                    "unknown key `\(entry.key)`\(hint)"))
        }
    }

    package static func issue(file: String?, path: ConfigPath, at place: SourceMark, _ message: String) -> ConfigIssue {
        ConfigIssue(
            path: path.description, message: message, file: file,
            line: place.isKnown ? place.line : nil, column: place.isKnown ? place.column : nil)
    }

    /// For unknown keys without a spelling hint that are known elsewhere in the schema (a `rssi_above`
    /// directly under a region instead of under its `enter`), says where they belong.
    mutating func hintMisplacedKeys() {
        for index in issues.indices {
            let message = issues[index].message
            guard message.hasPrefix("unknown key `"), !message.includes("did you mean") else { continue }
            let here = ConfigPath(parsing: issues[index].path)
            guard case .key(let key)? = here.components.last else { continue }
            let parentHere = ConfigReader.schemaPath(of: ConfigPath(Array(here.components.dropLast())))
            let homes = knownSchemaPaths.compactMap { known -> String? in
                let parts = known.split(separator: ".", omittingEmptySubsequences: false)
                guard let last = parts.last, last == key || last == key + "[]" else { return nil }
                let parent = parts.dropLast().joined(separator: ".")
                return parent == parentHere ? nil : parent
            }
            guard let home = homes.min(by: { ($0.count, $0) < ($1.count, $1) }) else { continue }
            issues[index].message += home.isEmpty ? "; it belongs at the top level" : "; it belongs under `\(home)`"
        }
    }

    public static func sortedByPlace(_ issues: [ConfigIssue]) -> [ConfigIssue] {
        // Stable: issues without a place keep their order after the placed ones.
        issues.enumerated().sorted { a, b in
            let ka = (a.element.line ?? Int.max, a.element.column ?? 0, a.offset)
            let kb = (b.element.line ?? Int.max, b.element.column ?? 0, b.offset)
            return ka < kb
        }.map(\.element)
    }

    /// The place of the node at `sub` below this section, or of its deepest existing ancestor.
    package func locate(_ sub: ConfigPath) -> SourceMark? {
        var found: SourceMark?
        var current = ConfigNode(.mapping(entries), mark: mark)
        for component in sub.components {
            switch component {
            case .key(let key):
                guard let entry = current.entry(key) else { return found }
                found = entry.value.isNull || !entry.value.mark.isKnown ? entry.keyMark : entry.value.mark
                current = entry.value
            case .index(let i):
                guard let items = current.items, items.indices.contains(i) else { return found }
                found = items[i].mark
                current = items[i]
            }
        }
        return found
    }
}
