/// A key path into a configuration document, rendered as `regions[2].enter.rssi_above`.
///
/// List indices are 0-based. Keys that are not simple identifiers (user-chosen names such as a format
/// called `my.layout`) are rendered quoted: `formats["my.layout"]`.
public struct ConfigPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    public static let root = ConfigPath()

    public func appending(_ key: String) -> ConfigPath { ConfigPath(components + [.key(key)]) }
    public func appending(index: Int) -> ConfigPath { ConfigPath(components + [.index(index)]) }

    public var description: String {
        var out = ""
        for component in components {
            switch component {
            case .index(let i):
                out += "[\(i)]"
            case .key(let key):
                if ConfigPath.isSimple(key) {
                    if !out.isEmpty { out += "." }
                    out += key
                } else {
                    out += "[\"" + ConfigPath.escaped(key) + "\"]"
                }
            }
        }
        return out
    }

    /// Parses a rendered path relative to nothing (the inverse of `description` for simple keys, indices
    /// and quoted keys). Used to place issues that validation code reports by path.
    public init(parsing text: String) {
        var components: [Component] = []
        var chars = Array(text)
        var i = 0
        var current = ""
        func flush() {
            if !current.isEmpty {
                components.append(.key(current))
                current = ""
            }
        }
        while i < chars.count {
            let c = chars[i]
            if c == "." {
                flush()
                i += 1
            } else if c == "[" {
                flush()
                if i + 1 < chars.count, chars[i + 1] == "\"" {
                    var key = ""
                    i += 2
                    while i < chars.count, chars[i] != "\"" {
                        if chars[i] == "\\", i + 1 < chars.count { i += 1 }
                        key.append(chars[i])
                        i += 1
                    }
                    components.append(.key(key))
                    i += 1  // closing quote
                    if i < chars.count, chars[i] == "]" { i += 1 }
                } else {
                    var digits = ""
                    i += 1
                    while i < chars.count, chars[i] != "]" {
                        digits.append(chars[i])
                        i += 1
                    }
                    i += 1
                    if let n = Int(digits) { components.append(.index(n)) } else { components.append(.key(digits)) }
                }
            } else {
                current.append(c)
                i += 1
            }
        }
        flush()
        chars.removeAll()
        self.components = components
    }

    static func isSimple(_ key: String) -> Bool {
        !key.isEmpty
            && key.unicodeScalars.allSatisfy { s in
                (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == "_" || s == "-"
            }
    }

    static func escaped(_ key: String) -> String {
        var out = ""
        for c in key {
            if c == "\"" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
