import Foundation
import TestSupport
import Testing

/// The `.ownThread` trait (TestSupport) that keeps the CPU-bound simulation suites off the cooperative pool.
@Suite struct OwnThreadTraitTests {
    /// The name of the thread running the caller (/proc/thread-self/comm).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.ownThread) func aMarkedTestRunsOnAThreadOfItsOwn() async {
        #expect(Self.threadName() == "bb-test-cpu")
        await Task.yield()  // and stays there after a suspension
        #expect(Self.threadName() == "bb-test-cpu")
    }

    @Test(.ownThread, arguments: [1, 2, 3]) func everyCaseOfAParameterizedTestToo(_ argument: Int) {
        #expect(Self.threadName() == "bb-test-cpu")
    }

    @Test func anUnmarkedTestRunsOnThePool() {
        #expect(!Self.threadName().isEmpty)
        #expect(Self.threadName() != "bb-test-cpu")
    }
}
