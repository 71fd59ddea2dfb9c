/// Nested sections, lists and user-named entries.
extension ConfigReader {
    /// Reads `node` as a mapping at `subpath` with a fresh reader, reports its unknown keys and keeps its
    /// issues. The building block of every nested accessor; use it for nodes you walked to yourself.
    /// `schema` is the sub-reader's `schemaPath` (default: `subpath` with `[]` for indices).
    public mutating func read<T>(
        _ node: ConfigNode, at subpath: ConfigPath, schema: String? = nil,
        mark place: SourceMark? = nil, _ body: (inout ConfigReader) -> T
    ) -> T {
        var sub = ConfigReader(node, file: file, path: subpath, mark: place, schemaPath: schema)
        let value = body(&sub)
        sub.reportUnknownKeys()
        absorb(sub)
        return value
    }

    package func schema(_ key: String, _ suffix: String = "") -> String {
        (schemaPath.isEmpty ? key : schemaPath + "." + key) + suffix
    }

    /// Runs `body` on an empty mapping only to learn the keys it knows (for "it belongs under" hints about
    /// sections the file leaves out); its value and issues are dropped.
    public mutating func learnKeys<T>(of key: String, suffix: String = "", _ body: (inout ConfigReader) -> T) {
        var probe = ConfigReader(.null(), file: file, path: path.appending(key), schemaPath: schema(key, suffix))
        _ = body(&probe)
        knownSchemaPaths.formUnion(probe.knownSchemaPaths)
    }

    /// A nested mapping. When the key is absent, `body` still runs (on an empty mapping), so defaults and
    /// missing required keys come out the same way as for a present section.
    public mutating func section<T>(_ key: String, _ body: (inout ConfigReader) -> T) -> T {
        let found = entry(key)
        let node = found?.value ?? .null(at: mark)
        let place = found.map { $0.value.isNull || !$0.value.mark.isKnown ? $0.keyMark : $0.value.mark } ?? mark
        return read(node, at: path.appending(key), schema: schema(key), mark: place, body)
    }

    /// A nested mapping that is only read when present (and not empty).
    public mutating func optionalSection<T>(_ key: String, _ body: (inout ConfigReader) -> T) -> T? {
        guard has(key) else {
            declare(key)
            learnKeys(of: key, body)
            return nil
        }
        return section(key, body)
    }

    /// A list of mappings, e.g. `regions:`; `body` reads one element. A single mapping where a list is
    /// expected is reported.
    public mutating func list<T>(_ key: String, _ body: (inout ConfigReader) -> T) -> [T] {
        let node = node(key)
        if let node, node.items == nil { issue("expected a list, found \(node.kindDescription)", key: key) }
        guard let items = node?.items, !items.isEmpty else {
            learnKeys(of: key, suffix: "[]", body)
            return []
        }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            out.append(read(item, at: path.appending(key).appending(index: i), schema: schema(key, "[]"), body))
        }
        return out
    }

    /// A list of single values, e.g. `formats: [ibeacon, eddystone]`. A lone value counts as a one-element
    /// list. Elements that do not decode are reported and left out.
    public mutating func list<T: ConfigScalarValue>(
        _ key: String, of type: T.Type = T.self,
        default fallback: [T] = []
    ) -> [T] {
        guard let node = node(key) else { return fallback }
        let items: [ConfigNode]
        switch node.content {
        case .sequence(let all): items = all
        case .scalar: items = [node]
        case .mapping, .null:
            issue("expected a list of \(T.configTypeDescription), found \(node.kindDescription)", key: key)
            return fallback
        }
        var out: [T] = []
        for (i, item) in items.enumerated() {
            let itemPath = node.items == nil ? path.appending(key) : path.appending(key).appending(index: i)
            guard let scalar = item.scalar else {
                issue(
                    "expected \(T.configTypeDescription), found \(item.kindDescription)", path: itemPath,
                    at: item.mark)
                continue
            }
            do {
                out.append(try T.decodeConfig(scalar))
            } catch {
                issue(error.message, path: itemPath, at: item.mark)
            }
        }
        return out
    }

    /// A mapping whose keys the user chooses (names of formats, beacons...) and whose values are mappings;
    /// `body` gets the name and a reader for the value. Document order is kept.
    public mutating func namedSections<T>(
        _ key: String,
        _ body: (_ name: String, inout ConfigReader) -> T
    ) -> [(name: String, value: T)] {
        guard let node = node(key) else {
            learnKeys(of: key, suffix: ".*") { body("*", &$0) }
            return []
        }
        guard let entries = node.entries else {
            issue("expected a mapping of names, found \(node.kindDescription)", key: key)
            return []
        }
        return entries.map { entry in
            let value = read(
                entry.value, at: path.appending(key).appending(entry.key), schema: schema(key, ".*"),
                mark: entry.value.isNull ? entry.keyMark : entry.value.mark
            ) { r in
                body(entry.key, &r)
            }
            return (entry.key, value)
        }
    }

    /// A mapping whose keys the user chooses and whose values are single values (e.g. `aliases: {name: mac}`).
    public mutating func namedValues<T: ConfigScalarValue>(
        _ key: String,
        of type: T.Type = T.self
    ) -> [(name: String, value: T)] {
        guard let node = node(key) else { return [] }
        guard let entries = node.entries else {
            issue("expected a mapping of names, found \(node.kindDescription)", key: key)
            return []
        }
        var out: [(name: String, value: T)] = []
        for entry in entries {
            let entryPath = path.appending(key).appending(entry.key)
            guard let scalar = entry.value.scalar else {
                issue(
                    "expected \(T.configTypeDescription), found \(entry.value.kindDescription)", path: entryPath,
                    at: entry.value.isNull ? entry.keyMark : entry.value.mark)
                continue
            }
            do {
                out.append((entry.key, try T.decodeConfig(scalar)))
            } catch {
                issue(error.message, path: entryPath, at: entry.value.mark)
            }
        }
        return out
    }
}
