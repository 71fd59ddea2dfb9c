import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the gateway binary links, read from the debug build the suites run (issue 45: the daemon's RSS is mostly the
/// binary's own text pages, so what it links is part of its memory).
@Suite struct BinaryLinkTests {
    /// The standard library's substring search (`contains(_: some StringProtocol)`, `firstRange(of:)`,
    /// `replacing(_:with:)`) lives in _StringProcessing: one call links it and the regex parser, about 0.9 MB of text
    /// in the static release binary. The gateway uses BeaconModel's `includes`, `range(ofText:)` and `replacingText`.
    @Test func theGatewayDoesNotLinkTheRegexEngine() async throws {
        let directory = NSTemporaryDirectory() + "binary-link-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ChildProcess(
            "/usr/bin/nm", ["-D", "--undefined-only", BuiltBinary.path],
            outputFiles: (directory + "/stdout", directory + "/stderr"))
        let exited = await child.exited(within: 60)
        if !exited { child.terminate(SIGKILL) }
        let status = child.wait()
        #expect(exited && status == 0, "nm exited with status \(status)")
        let symbols = try String(contentsOfFile: directory + "/stdout", encoding: .utf8).split(separator: "\n")
        #expect(symbols.count > 100, "nm listed the binary's undefined symbols (\(symbols.count))")
        let regex = symbols.filter { $0.contains("17_StringProcessing") || $0.contains("12_RegexParser") }
        #expect(regex.isEmpty, "symbols from _StringProcessing or _RegexParser: \(regex.prefix(5))")
    }
}
