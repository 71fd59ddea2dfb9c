import BeaconConfigReading
import CYAML

/// A YAML document as the loader accepts it: the tree (nil when it could not be built) and every problem found.
public struct YAMLDocument: Sendable {
    public var root: ConfigNode?
    public var issues: [ConfigIssue]
}

/// Parses YAML text into a `ConfigNode` tree with libyaml's event API.
public enum YAMLParser {
    /// Parses `bytes` (UTF-8, UTF-16 with BOM). Never traps: syntax errors become an issue with libyaml's
    /// problem text at file:line:column, limits (size, nodes, depth) stop parsing with an issue.
    public static func parse(
        _ bytes: [UInt8], file: String? = nil,
        limits: YAMLLimits = .standard
    ) -> YAMLDocument {
        if bytes.count > limits.maxBytes {
            let issue = ConfigIssue(
                path: "",
                message: "the file is \(bytes.count) bytes; at most \(limits.maxBytes) "
                    + "bytes are accepted", file: file, line: nil, column: nil)
            return YAMLDocument(root: nil, issues: [issue])
        }
        if bytes.isEmpty { return YAMLDocument(root: .null(at: SourceMark(line: 1, column: 1)), issues: []) }
        var builder = YAMLTreeBuilder(file: file, limits: limits)
        let ok = bytes.withUnsafeBufferPointer { buffer in
            run(buffer, into: &builder)
        }
        if !ok || builder.isAborted { return YAMLDocument(root: nil, issues: builder.issues) }
        return YAMLDocument(root: builder.root ?? .null(at: SourceMark(line: 1, column: 1)), issues: builder.issues)
    }

    public static func parse(_ text: String, file: String? = nil, limits: YAMLLimits = .standard) -> YAMLDocument {
        parse(Array(text.utf8), file: file, limits: limits)
    }

    /// The event loop. The corresponding C functions are `yaml_parser_initialize`, `yaml_parser_parse`,
    /// `yaml_event_delete` and `yaml_parser_delete`. Returns false on a syntax error (already recorded).
    private static func run(_ input: UnsafeBufferPointer<UInt8>, into builder: inout YAMLTreeBuilder) -> Bool {
        // Heap-allocated so libyaml's structs never move while it holds them.
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        let event = UnsafeMutablePointer<yaml_event_t>.allocate(capacity: 1)
        defer {
            parser.deallocate()
            event.deallocate()
        }
        guard yaml_parser_initialize(parser) == 1 else {
            builder.issue("the YAML parser could not be initialised (out of memory)", at: .unknown)
            return false
        }
        defer { yaml_parser_delete(parser) }
        yaml_parser_set_input_string(parser, input.baseAddress, input.count)

        while !builder.isAborted {
            guard yaml_parser_parse(parser, event) == 1 else {
                recordError(parser.pointee, input: input, into: &builder)
                return false
            }
            defer { yaml_event_delete(event) }
            let e = event.pointee
            let mark = SourceMark(line: Int(e.start_mark.line) + 1, column: Int(e.start_mark.column) + 1)
            switch e.type {
            case YAML_STREAM_END_EVENT:
                return true
            case YAML_DOCUMENT_START_EVENT:
                builder.documentStart(at: mark)
            case YAML_SCALAR_EVENT:
                let s = e.data.scalar
                builder.scalar(
                    text(s.value, length: s.length), style: style(s.style), tag: optionalText(s.tag),
                    anchor: optionalText(s.anchor), at: mark)
            case YAML_ALIAS_EVENT:
                builder.alias(optionalText(e.data.alias.anchor) ?? "", at: mark)
            case YAML_SEQUENCE_START_EVENT:
                let s = e.data.sequence_start
                builder.startSequence(tag: optionalText(s.tag), anchor: optionalText(s.anchor), at: mark)
            case YAML_MAPPING_START_EVENT:
                let m = e.data.mapping_start
                builder.startMapping(tag: optionalText(m.tag), anchor: optionalText(m.anchor), at: mark)
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                builder.endContainer()
            default:
                break  // stream start, document end, no event
            }
        }
        return true
    }

    private static func recordError(
        _ p: yaml_parser_t, input: UnsafeBufferPointer<UInt8>,
        into builder: inout YAMLTreeBuilder
    ) {
        let problem = optionalText(p.problem) ?? "unknown problem"
        var mark: SourceMark
        var message: String
        if p.error == YAML_READER_ERROR {
            // Reader errors (bad encoding, control characters) carry a byte offset rather than a mark.
            mark = place(ofByte: Int(p.problem_offset), in: input)
            message = "the file is not valid YAML text: \(problem)"
            if p.problem_value != -1 { message += " (byte 0x\(String(p.problem_value, radix: 16)))" }
        } else {
            mark = SourceMark(line: Int(p.problem_mark.line) + 1, column: Int(p.problem_mark.column) + 1)
            message = "YAML syntax error: \(problem)"
            if let context = optionalText(p.context) {
                message += " (\(context) at line \(p.context_mark.line + 1), column \(p.context_mark.column + 1))"
            }
            if p.error == YAML_MEMORY_ERROR {
                message = "the YAML parser ran out of memory"
                mark = .unknown
            }
        }
        builder.issue(message, at: mark)
    }

    /// 1-based line and column (in characters) of a byte offset, for reader errors.
    static func place(ofByte offset: Int, in input: UnsafeBufferPointer<UInt8>) -> SourceMark {
        var line = 1
        var column = 1
        for byte in input.prefix(max(0, min(offset, input.count))) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return SourceMark(line: line, column: column)
    }

    private static func style(_ s: yaml_scalar_style_t) -> ConfigScalar.Style {
        switch s {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .plain
        }
    }

    private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?, length: Int) -> String {
        guard let pointer, length > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    private static func optionalText(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: pointer)
    }

    private static func optionalText(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: pointer)
    }
}
