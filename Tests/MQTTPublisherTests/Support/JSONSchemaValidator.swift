import BeaconModel
import Foundation
import TestSupport

/// A JSON Schema (2020-12) validator for the subset the docs/schemas files use: `type`, `const`, `enum`,
/// `properties`, `required`, `additionalProperties`, `items`, `anyOf`, `$ref` to `#/$defs/...`, `minimum`,
/// `maximum`, `minLength`, `pattern`. An unknown keyword is an error, so a schema cannot silently outgrow it.
struct JSONSchemaValidator {
    let root: JSONValue

    static let known: Set<String> = [
        "$schema", "$id", "$defs", "title", "description", "type", "const", "enum", "properties", "required",
        "additionalProperties", "items", "anyOf", "$ref", "minimum", "maximum", "minLength", "pattern",
    ]

    init(file: String) throws {
        root = try JSONValue(parsing: String(contentsOfFile: file, encoding: .utf8))
    }

    /// Every violation, as `<path>: <problem>`; empty when valid.
    func validate(_ value: JSONValue) -> [String] { check(value, against: root, at: "$") }

    private func check(_ value: JSONValue, against schema: JSONValue, at path: String) -> [String] {
        guard case let .object(members) = schema else { return ["\(path): schema is not an object"] }
        var problems: [String] = []
        for (keyword, rule) in members {
            guard JSONSchemaValidator.known.contains(keyword) else {
                problems.append("\(path): unsupported schema keyword \(keyword)")
                continue
            }
            switch keyword {
            case "$ref":
                guard case let .string(reference) = rule, reference.hasPrefix("#/$defs/"),
                    let target = root["$defs"]?[String(reference.dropFirst(8))]
                else {
                    problems.append("\(path): unresolvable $ref")
                    continue
                }
                problems += check(value, against: target, at: path)
            case "type":
                let names: [String]
                switch rule {
                case let .string(name): names = [name]
                case let .array(items): names = items.compactMap { if case let .string(s) = $0 { s } else { nil } }
                default: names = []
                }
                if !names.contains(where: { matches(value, type: $0) }) {
                    problems.append("\(path): expected \(names.joined(separator: "|")), got \(value.serialized)")
                }
            case "const":
                if value != rule { problems.append("\(path): expected \(rule.serialized), got \(value.serialized)") }
            case "enum":
                if case let .array(options) = rule, !options.contains(value) {
                    problems.append("\(path): \(value.serialized) not in \(rule.serialized)")
                }
            case "anyOf":
                if case let .array(options) = rule,
                    !options.contains(where: { check(value, against: $0, at: path).isEmpty })
                {
                    problems.append("\(path): matches none of anyOf")
                }
            case "required":
                if case .object = value, case let .array(keys) = rule {
                    for case let .string(key) in keys where value[key] == nil {
                        problems.append("\(path): missing \(key)")
                    }
                }
            case "properties":
                if case let .object(valueMembers) = value, case .object = rule {
                    for (key, member) in valueMembers {
                        if let sub = rule[key] { problems += check(member, against: sub, at: "\(path).\(key)") }
                    }
                }
            case "additionalProperties":
                if case let .object(valueMembers) = value {
                    let declared = schema["properties"]
                    for (key, member) in valueMembers where declared?[key] == nil {
                        switch rule {
                        case .bool(false): problems.append("\(path): unexpected key \(key)")
                        case .object: problems += check(member, against: rule, at: "\(path).\(key)")
                        default: break
                        }
                    }
                }
            case "items":
                if case let .array(items) = value {
                    for (index, item) in items.enumerated() {
                        problems += check(item, against: rule, at: "\(path)[\(index)]")
                    }
                }
            case "minimum", "maximum":
                if let number = value.number, let bound = rule.number,
                    keyword == "minimum" ? number < bound : number > bound
                {
                    problems.append("\(path): \(number) violates \(keyword) \(bound)")
                }
            case "minLength":
                if case let .string(text) = value, let bound = rule.number, Double(text.count) < bound {
                    problems.append("\(path): shorter than \(Int(bound))")
                }
            case "pattern":
                if case let .string(text) = value, case let .string(pattern) = rule {
                    let regex = try? NSRegularExpression(pattern: pattern)
                    if regex?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                        problems.append("\(path): \(text) does not match \(pattern)")
                    }
                }
            default: break
            }
        }
        return problems
    }

    private func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("integer", .int): true
        case let ("integer", .double(number)): number == number.rounded()
        case ("number", .int), ("number", .double): true
        default: false
        }
    }

    /// The schema file for an event kind, found from this source file's location.
    static func forKind(_ kind: String) throws -> JSONSchemaValidator {
        let thisFile = #filePath  // Tests/MQTTPublisherTests/Support/JSONSchemaValidator.swift
        let root = URL(fileURLWithPath: thisFile).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return try JSONSchemaValidator(file: root.appendingPathComponent("docs/schemas/\(kind).schema.json").path)
    }
}

extension JSONValue {
    var number: Double? {
        switch self {
        case let .int(value): Double(value)
        case let .double(value): value
        default: nil
        }
    }

    var string: String? { if case let .string(value) = self { value } else { nil } }
}
