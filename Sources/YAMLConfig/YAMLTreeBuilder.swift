import BeaconConfigReading

/// Builds a `ConfigNode` tree from parser events (pure Swift; `YAMLParser` feeds it from libyaml).
///
/// Enforces the loader's rules: one document, keys are non-empty single values and unique, only the core
/// schema's tags, aliases expanded within the node limit, merge keys (`<<: *defaults`) applied, bounded depth.
/// Rule violations that leave a usable tree (a duplicate or bad key, a tag) are collected and building goes
/// on; limits stop it (`isAborted`).
struct YAMLTreeBuilder {
    private struct Frame {
        enum Kind { case sequence, mapping }
        var kind: Kind
        var mark: SourceMark
        var anchor: String?
        var count = 1
        var items: [ConfigNode] = []
        var entries: [ConfigEntry] = []
        var pendingKey: ConfigEntry?
        var keyRejected = false
        var merges: [ConfigNode] = []
    }

    static let coreTagPrefix = "tag:yaml.org,2002:"

    let file: String?
    let limits: YAMLLimits
    private var stack: [Frame] = []
    private var anchors: [String: (node: ConfigNode, count: Int)] = [:]
    private(set) var root: ConfigNode?
    private(set) var issues: [ConfigIssue] = []
    private(set) var isAborted = false
    private var totalNodes = 0
    private var documents = 0

    init(file: String?, limits: YAMLLimits) {
        self.file = file
        self.limits = limits
    }

    // MARK: Events

    mutating func documentStart(at mark: SourceMark) {
        documents += 1
        if documents > 1 {
            abort("only one YAML document per file is supported (found a second one)", at: mark)
        }
    }

    mutating func scalar(
        _ text: String, style: ConfigScalar.Style, tag: String?, anchor: String?,
        at mark: SourceMark
    ) {
        guard countNodes(1, at: mark) else { return }
        let node: ConfigNode
        let tagName = tag.map(Self.shortTag)
        switch tag {
        case nil:
            let isNull = style == .plain && ["", "~", "null", "Null", "NULL"].contains(text)
            node = isNull ? .null(at: mark) : .scalar(text, style: style, at: mark)
        case "!", Self.coreTagPrefix + "str":
            node = .scalar(text, style: style == .plain ? .singleQuoted : style, tag: tag, at: mark)
        case Self.coreTagPrefix + "null":
            node = .null(at: mark)
        case Self.coreTagPrefix + "int", Self.coreTagPrefix + "float", Self.coreTagPrefix + "bool":
            node = .scalar(text, style: style, tag: tag, at: mark)
        default:
            reject(tag: tagName ?? "", at: mark)
            node = .null(at: mark)
        }
        if let anchor { anchors[anchor] = (node, 1) }
        emit(node, count: 1)
    }

    mutating func alias(_ anchor: String, at mark: SourceMark) {
        guard let target = anchors[anchor] else {
            let open = stack.contains { $0.anchor == anchor }
            issue(
                open
                    ? "alias `*\(anchor)` refers to a node that contains it"
                    : "alias `*\(anchor)` refers to no anchor defined before it", at: mark)
            guard countNodes(1, at: mark) else { return }
            emit(.null(at: mark), count: 1)
            return
        }
        guard countNodes(target.count, at: mark) else { return }
        emit(target.node, count: target.count)
    }

    mutating func startSequence(tag: String?, anchor: String?, at mark: SourceMark) {
        startContainer(.sequence, allowedTag: Self.coreTagPrefix + "seq", tag: tag, anchor: anchor, at: mark)
    }

    mutating func startMapping(tag: String?, anchor: String?, at mark: SourceMark) {
        startContainer(.mapping, allowedTag: Self.coreTagPrefix + "map", tag: tag, anchor: anchor, at: mark)
    }

    mutating func endContainer() {
        guard var frame = stack.popLast() else { return }
        let node: ConfigNode
        switch frame.kind {
        case .sequence:
            node = .sequence(frame.items, at: frame.mark)
        case .mapping:
            applyMerges(&frame)
            node = .mapping(frame.entries, at: frame.mark)
        }
        if let anchor = frame.anchor { anchors[anchor] = (node, frame.count) }
        emit(node, count: frame.count)
    }

    // MARK: Building

    private mutating func startContainer(
        _ kind: Frame.Kind, allowedTag: String, tag: String?, anchor: String?,
        at mark: SourceMark
    ) {
        guard countNodes(1, at: mark) else { return }
        if let tag, tag != allowedTag, tag != "!" { reject(tag: Self.shortTag(tag), at: mark) }
        guard stack.count < limits.maxDepth else {
            abort("nesting deeper than \(limits.maxDepth) levels", at: mark)
            return
        }
        stack.append(Frame(kind: kind, mark: mark, anchor: anchor))
    }

    private mutating func emit(_ node: ConfigNode, count: Int) {
        guard !stack.isEmpty else {
            root = node
            return
        }
        let top = stack.count - 1
        stack[top].count += count
        switch stack[top].kind {
        case .sequence:
            stack[top].items.append(node)
        case .mapping:
            if stack[top].pendingKey == nil, !stack[top].keyRejected {
                acceptKey(node, frame: top)
            } else if stack[top].keyRejected {
                stack[top].keyRejected = false
            } else if var entry = stack[top].pendingKey {
                stack[top].pendingKey = nil
                entry.value = node
                addEntry(entry, frame: top)
            }
        }
    }

    private mutating func acceptKey(_ node: ConfigNode, frame top: Int) {
        switch node.content {
        case .scalar(let s):
            stack[top].pendingKey = ConfigEntry(key: s.text, keyMark: node.mark, value: .null())
        case .null:
            issue("a key must not be empty", at: node.mark)
            stack[top].keyRejected = true
        case .sequence, .mapping:
            issue("a key must be a single value, not \(node.kindDescription)", at: node.mark)
            stack[top].keyRejected = true
        }
    }

    private mutating func addEntry(_ entry: ConfigEntry, frame top: Int) {
        if entry.key == "<<" {
            switch entry.value.content {
            case .mapping:
                stack[top].merges.append(entry.value)
                return
            case .sequence(let items) where items.allSatisfy({ $0.entries != nil }):
                stack[top].merges.append(contentsOf: items)
                return
            default:
                issue(
                    "the merge key `<<` needs a mapping or a list of mappings (usually an alias like *defaults)",
                    at: entry.value.mark.isKnown ? entry.value.mark : entry.keyMark)
                return
            }
        }
        if let first = stack[top].entries.first(where: { $0.key == entry.key }) {
            issue(
                "duplicate key `\(entry.key)` (first defined at line \(first.keyMark.line), column "
                    + "\(first.keyMark.column)); the second one would silently win in other YAML readers",
                at: entry.keyMark, path: pathHere(frames: top).appending(entry.key))
            return
        }
        stack[top].entries.append(entry)
    }

    /// YAML merge keys: explicit keys win over merged ones, earlier merged mappings over later ones.
    private func applyMerges(_ frame: inout Frame) {
        for merged in frame.merges {
            for entry in merged.entries ?? [] where !frame.entries.contains(where: { $0.key == entry.key }) {
                frame.entries.append(entry)
            }
        }
    }

    private mutating func countNodes(_ n: Int, at mark: SourceMark) -> Bool {
        totalNodes += n
        if totalNodes > limits.maxNodes {
            abort("the document has more than \(limits.maxNodes) nodes (after expanding aliases)", at: mark)
            return false
        }
        return true
    }

    private mutating func reject(tag: String, at mark: SourceMark) {
        issue("the tag `\(tag)` is not supported (only plain values, lists and mappings)", at: mark)
    }

    mutating func abort(_ message: String, at mark: SourceMark) {
        issue(message, at: mark)
        isAborted = true
    }

    /// The key path of the node being built: one component per open container.
    private func pathHere(frames: Int? = nil) -> ConfigPath {
        var path = ConfigPath.root
        for frame in stack.prefix(frames ?? stack.count) {
            switch frame.kind {
            case .sequence: path = path.appending(index: frame.items.count)
            case .mapping: if let key = frame.pendingKey?.key { path = path.appending(key) }
            }
        }
        return path
    }

    mutating func issue(_ message: String, at mark: SourceMark, path: ConfigPath? = nil) {
        let location = path ?? pathHere()
        issues.append(
            ConfigIssue(
                path: location.description, message: message, file: file,
                line: mark.isKnown ? mark.line : nil, column: mark.isKnown ? mark.column : nil))
    }

    /// `!!binary` for `tag:yaml.org,2002:binary`; other tags unchanged.
    static func shortTag(_ tag: String) -> String {
        tag.hasPrefix(coreTagPrefix) ? "!!" + tag.dropFirst(coreTagPrefix.count) : tag
    }
}
