import BeaconConfigReading
import Testing

@testable import YAMLConfig

@Suite struct YAMLParserTests {
    func parse(_ text: String, limits: YAMLLimits = .standard) -> YAMLDocument {
        YAMLParser.parse(text, file: "t.yaml", limits: limits)
    }

    @Test func buildsTreeWithMarks() throws {
        let doc = parse(
            """
            gateway:
              id: pi-kitchen
              room: "kitchen"
            regions:
              - name: desk
                uuid: 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6
            """)
        #expect(doc.issues.isEmpty)
        let root = try #require(doc.root)
        let gateway = try #require(root.entry("gateway"))
        #expect(gateway.keyMark == SourceMark(line: 1, column: 1))
        let id = try #require(gateway.value.entry("id"))
        #expect(id.keyMark == SourceMark(line: 2, column: 3))
        #expect(id.value.mark == SourceMark(line: 2, column: 7))
        #expect(id.value.scalar == ConfigScalar("pi-kitchen"))
        #expect(gateway.value.entry("room")?.value.scalar?.style == .doubleQuoted)
        let regions = try #require(root.entry("regions")?.value.items)
        #expect(regions.count == 1)
        #expect(regions[0].entry("uuid")?.value.mark == SourceMark(line: 6, column: 11))
        #expect(root.entries?.map(\.key) == ["gateway", "regions"])
    }

    @Test func plainNullsAndQuotedStrings() throws {
        let root = try #require(parse("a:\nb: ~\nc: null\nd: 'null'\ne: !!str null\nf: !!null x\ng: ''").root)
        #expect(root.entry("a")?.value.isNull == true)
        #expect(root.entry("b")?.value.isNull == true)
        #expect(root.entry("c")?.value.isNull == true)
        #expect(root.entry("d")?.value.scalar?.text == "null")
        #expect(root.entry("e")?.value.scalar?.text == "null")
        #expect(root.entry("f")?.value.isNull == true)
        #expect(root.entry("g")?.value.scalar?.text == "")
    }

    @Test func syntaxErrorHasLibyamlProblemAndPlace() {
        let doc = parse("gateway:\n  id: a\n   room: b\n")
        #expect(doc.root == nil)
        #expect(doc.issues.count == 1)
        let issue = doc.issues[0]
        #expect(issue.file == "t.yaml")
        #expect(issue.line == 3)
        #expect(issue.column == 8)
        #expect(issue.message.hasPrefix("YAML syntax error: mapping values are not allowed in this context"))
    }

    @Test func unclosedFlowSequenceNamesContext() {
        let doc = parse("a: [1, 2\nb: 3\n")
        #expect(doc.root == nil)
        #expect(doc.issues.first?.message.contains("while parsing a flow sequence at line 1, column 4") == true)
    }

    @Test func duplicateKeyNamesBothLines() throws {
        let doc = parse("mqtt:\n  host: a\n  port: 1883\n  host: b\n")
        let root = try #require(doc.root)
        #expect(doc.issues.count == 1)
        let issue = doc.issues[0]
        #expect(issue.path == "mqtt.host")
        #expect(issue.line == 4 && issue.column == 3)
        #expect(issue.message.contains("duplicate key `host` (first defined at line 2, column 3)"))
        #expect(root.entry("mqtt")?.value.entry("host")?.value.scalar?.text == "a")
    }

    @Test func multipleDocumentsRejected() {
        let doc = parse("a: 1\n---\nb: 2\n")
        #expect(doc.root == nil)
        #expect(doc.issues.map(\.line) == [2])
        #expect(doc.issues.first?.message.contains("only one YAML document") == true)
    }

    @Test(arguments: [
        "!!binary aGVsbG8=", "!!timestamp 2001-12-14", "!foo bar", "!!python/object:os.system x",
        "!!set {a, b}", "!!omap [a: 1]",
    ])
    func foreignTagsRejected(value: String) throws {
        let doc = parse("key: \(value)\n")
        #expect(doc.issues.count == 1)
        #expect(doc.issues.first?.message.contains("is not supported") == true)
        #expect(doc.issues.first?.path == "key")
        #expect(doc.issues.first?.line == 1 && doc.issues.first?.column == 6)
    }

    @Test func coreTagsAccepted() {
        #expect(parse("a: !!str 1\nb: !!int 2\nc: !!float 1.5\nd: !!bool yes\ne: !!map {}\nf: !!seq []").issues.isEmpty)
    }

    @Test func nonScalarAndEmptyKeysRejected() {
        let doc = parse("? [a, b]\n: 1\n? {x: 1}\n: 2\n? ~\n: 3\nok: 4\n")
        #expect(doc.issues.count == 3, "\(doc.issues)")
        #expect(doc.issues.allSatisfy { $0.message.hasPrefix("a key must") }, "\(doc.issues)")
        #expect(doc.root?.entries?.map(\.key) == ["ok"])
    }

    @Test func aliasesExpandAndMergeKeysApply() throws {
        let doc = parse(
            """
            defaults: &d
              rssi: -70
              exit: 30s
            regions:
              - <<: *d
                name: desk
                exit: 10s
              - tags: &t [a, b]
                more: *t
            """)
        #expect(doc.issues.isEmpty)
        let regions = try #require(doc.root?.entry("regions")?.value.items)
        #expect(regions[0].entries?.map(\.key) == ["name", "exit", "rssi"])
        #expect(regions[0].entry("exit")?.value.scalar?.text == "10s")
        #expect(regions[1].entry("more")?.value.items?.count == 2)
    }

    @Test func aliasBombStopsAtNodeLimit() {
        var text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1...9 {
            let prev = i == 1 ? "a" : "a\(i - 1)"
            let refs = Array(repeating: "*\(prev)", count: 10).joined(separator: ", ")
            text += "a\(i): &a\(i) [\(refs)]\n"
        }
        let doc = parse(text)
        #expect(doc.root == nil)
        #expect(doc.issues.count == 1)
        #expect(doc.issues.first?.message.contains("more than 100000 nodes") == true)
    }

    @Test func undefinedAndSelfAliasesReported() {
        let doc = parse("a: *nope\nb: &s [1, *s]\n")
        #expect(doc.issues.count == 2)
        #expect(doc.issues[0].message.contains("refers to no anchor"))
        #expect(doc.issues[1].message.contains("contains it"))
    }

    @Test func depthAndSizeLimits() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let d = parse(deep)
        #expect(d.root == nil)
        #expect(d.issues.first?.message.contains("nesting deeper than 64") == true)
        let big = parse(String(repeating: "#", count: 2000), limits: YAMLLimits(maxBytes: 1000))
        #expect(big.root == nil)
        #expect(big.issues.first?.message.contains("at most 1000 bytes") == true)
    }

    @Test func invalidEncodingIsReaderErrorWithPlace() {
        let doc = YAMLParser.parse(Array("a: 1\nb: x".utf8) + [0xFF, 0xFE, 0x41], file: "t.yaml")
        #expect(doc.root == nil)
        #expect(doc.issues.first?.message.hasPrefix("the file is not valid YAML text") == true)
        #expect(doc.issues.first?.line == 2)
    }

    @Test func emptyAndCommentOnlyFilesAreEmptyMappings() {
        #expect(parse("").root?.isNull == true)
        #expect(parse("# nothing here\n").root?.isNull == true)
    }

    @Test func windowsLineEndingsAndByteOrderMarkKeepPlaces() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("gateway:\r\n  id: pi\r\n  room: x y\r\n".utf8)
        let doc = YAMLParser.parse(bytes, file: "w.yaml")
        #expect(doc.issues.isEmpty)
        let room = try #require(doc.root?.entry("gateway")?.value.entry("room"))
        #expect(room.keyMark == SourceMark(line: 3, column: 3))
        #expect(room.value.scalar?.text == "x y")
    }

    @Test func utf16WithByteOrderMarkIsRead() throws {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in "gateway: {id: pi}\n".utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let doc = YAMLParser.parse(bytes, file: "u.yaml")
        #expect(doc.issues.isEmpty)
        #expect(doc.root?.entry("gateway")?.value.entry("id")?.value.scalar?.text == "pi")
    }
}
