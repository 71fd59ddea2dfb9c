#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary (`environ`).
enum ProcessEnvironment {
    static func current() -> [String: String] {
        var out: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                out[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            pointer += 1
        }
        return out
    }
}
