/// Renders one log record as a logfmt line: `ts=... level=info logger=mqtt msg="..." key=value`.
///
/// Values are quoted when empty or when they contain a space, `=`, `"` or a control character; inside quotes
/// `\` and `"` are escaped and control characters written as `\n`, `\r`, `\t` or `\u00XX`, so one record is
/// always one line. Keys keep `A-Z a-z 0-9 _ . -` and replace anything else by `_`. Metadata keys are sorted
/// so lines are stable.
public enum LogfmtFormatter {
    public static func line(
        timestamp: String?, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata
    ) -> String {
        var out = ""
        if let timestamp { out += "ts=" + value(timestamp) + " " }
        out += "level=" + level.rawValue
        if !label.isEmpty { out += " logger=" + value(label) }
        out += " msg=" + value(message)
        for key in metadata.keys.sorted() {
            out += " " + self.key(key) + "=" + value(metadata[key]!.description)
        }
        return out
    }

    public static func key(_ text: String) -> String {
        guard !text.isEmpty else { return "_" }
        return String(
            text.unicodeScalars.map { s -> Character in
                let ok =
                    (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9")
                    || s == "_" || s == "." || s == "-"
                return ok ? Character(s) : "_"
            })
    }

    public static func value(_ text: String) -> String {
        let needsQuotes =
            text.isEmpty
            || text.unicodeScalars.contains { s in
                s == " " || s == "=" || s == "\"" || s == "\\" || s.value < 0x20 || s.value == 0x7F
                    || (s.value >= 0x80 && s.properties.generalCategory == .control)
                    || s == "\u{2028}" || s == "\u{2029}"
            }
        guard needsQuotes else { return text }
        var out = "\""
        for s in text.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if s.value < 0x20 || s.value == 0x7F || s == "\u{2028}" || s == "\u{2029}"
                    || (s.value >= 0x80 && s.properties.generalCategory == .control)
                {
                    let hex = String(s.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out + "\""
    }
}
