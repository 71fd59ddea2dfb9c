import BeaconConfig
import BeaconConfigReading
import YAMLConfig

/// The shared part of a site configuration as a tree, and how it joins a gateway's own file: each section it
/// sets replaces the local file's section of that name; the local file keeps every other section
/// (docs/site-config.md, "What is shared").
public struct SiteDocument: Sendable {
    /// The top-level mapping of the shared part (empty when the text is empty).
    public var root: ConfigNode
    /// The name issues found in the shared part carry in place of a file name (e.g. `site.yaml`, `site v3`).
    public var label: String

    /// Keys that hold a secret itself rather than naming its file: never in a document every subscriber of the
    /// broker can read.
    public static let inlineSecretKeys: Set<String> = ["irk", "key", "password", "secret"]

    /// Parses the shared part's text (bounded by `limits`); the problems with their lines otherwise.
    public static func parse(_ text: String, label: String, limits: YAMLLimits) -> Result<SiteDocument, SiteRefusal> {
        let document = YAMLParser.parse(text, file: label, limits: limits)
        guard let root = document.root, document.issues.isEmpty else {
            return .failure(
                SiteRefusal(
                    .invalid, "the shared part is not valid YAML",
                    problems: document.issues.map(\.located)))
        }
        if root.isNull { return .success(SiteDocument(root: .mapping([], at: root.mark), label: label)) }
        guard root.entries != nil else {
            return .failure(
                SiteRefusal(
                    .invalid, "the shared part must be a mapping of sections",
                    problems: ["\(label): the document is \(root.kindDescription)"]))
        }
        return .success(SiteDocument(root: root, label: label))
    }

    public init(root: ConfigNode, label: String) {
        self.root = root
        self.label = label
    }

    /// Keys the shared part may not set: a local section (`mqtt`, `gateway`, ...), or a secret written inline
    /// anywhere in it. Empty when there are none.
    public var localOnlyProblems: [String] {
        var problems: [String] = []
        for entry in root.entries ?? [] {
            if SiteSettings.localSections.contains(entry.key) {
                problems.append(
                    located(
                        entry.keyMark, path: entry.key,
                        "`\(entry.key)` belongs to each gateway's own file, not to the site configuration"))
            } else {
                findSecrets(in: entry.value, path: entry.key, into: &problems)
            }
        }
        return problems
    }

    private func findSecrets(in node: ConfigNode, path: String, into problems: inout [String]) {
        switch node.content {
        case .mapping(let entries):
            for entry in entries {
                let child = path + "." + entry.key
                if SiteDocument.inlineSecretKeys.contains(entry.key) {
                    problems.append(
                        located(
                            entry.keyMark, path: child,
                            "a secret written in the site configuration would be readable from the broker: name a "
                                + "file each gateway holds (`\(entry.key)_file`) instead"))
                } else {
                    findSecrets(in: entry.value, path: child, into: &problems)
                }
            }
        case .sequence(let items):
            for (index, item) in items.enumerated() {
                findSecrets(in: item, path: "\(path)[\(index)]", into: &problems)
            }
        case .null, .scalar: break
        }
    }

    private func located(_ mark: SourceMark, path: String, _ message: String) -> String {
        ConfigIssue(
            path: path, message: message, file: label, line: mark.isKnown ? mark.line : nil,
            column: mark.isKnown ? mark.column : nil
        ).located
    }

    /// The sections this document sets (its top-level keys).
    public var sections: [String] { (root.entries ?? []).map(\.key) }

    /// The gateway's own tree with this document's sections in place of its own of the same name.
    public func merged(into local: ConfigNode) -> ConfigNode {
        let shared = root.entries ?? []
        let replaced = Set(shared.map(\.key))
        let kept = (local.entries ?? []).filter { !replaced.contains($0.key) }
        return .mapping(kept + shared, at: local.mark)
    }

    /// Validates this document joined with the gateway's own tree, with the same reader as `check-config`;
    /// problems in a section of this document carry its label instead of the local file's name.
    public func validate(
        with local: ConfigNode, localFile: String, environment: ConfigEnvironment, checksFiles: Bool = true
    ) -> Result<GatewayConfiguration, SiteRefusal> {
        switch ConfigurationLoader.load(
            root: merged(into: local), file: localFile, environment: environment, checksFiles: checksFiles)
        {
        case .success(let configuration): return .success(configuration)
        case .failure(let errors):
            let mine = Set(sections)
            let issues = errors.issues.map { issue in
                var issue = issue
                if mine.contains(SiteDocument.section(of: issue.path)) { issue.file = label }
                return issue
            }
            return .failure(
                SiteRefusal(
                    .invalid, "the configuration does not validate with this gateway's own file",
                    problems: issues.map(\.located)))
        }
    }

    /// The top-level key of a key path (`regions[2].name` is in `regions`).
    static func section(of path: String) -> String {
        String(path.prefix { $0 != "." && $0 != "[" })
    }
}
