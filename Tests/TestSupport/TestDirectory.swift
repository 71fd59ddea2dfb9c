import Foundation

/// A fresh directory under the system temp dir (`mkdtemp`), kept after the test (a broker's log, a daemon's
/// output stay there to look at).
public enum TestDirectory {
    public static func make(prefix: String) throws -> String {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TestFailure("mkdtemp failed")
        }
        return String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }
}

/// A `TestDirectory` removed with everything in it when the value is released (a suite's stored property:
/// one directory per test).
public final class TemporaryDirectory {
    public let path: String

    public init(prefix: String = "bb-test") {
        do { path = try TestDirectory.make(prefix: prefix) } catch { preconditionFailure("\(error)") }
    }

    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
