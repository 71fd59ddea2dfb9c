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

    /// The nice value of the calling thread (Linux keeps it per thread).
    static func threadNice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test(.ownThread) func aMarkedTestRunsOnAThreadOfItsOwn() async {
        #expect(Self.threadName() == "bb-test-cpu")
        await Task.yield()  // and stays there after a suspension
        #expect(Self.threadName() == "bb-test-cpu")
    }

    /// At background priority, so the pool's waiting tests keep their share of the cores (at least nice 10: a
    /// suite started with a higher nice value keeps it).
    @Test(.ownThread) func aMarkedTestRunsAtBackgroundPriority() {
        #expect(Self.threadNice() >= OwnThreadExecutor.backgroundNice)
    }

    @Test(.ownThread, arguments: [1, 2, 3]) func everyCaseOfAParameterizedTestToo(_ argument: Int) {
        #expect(Self.threadName() == "bb-test-cpu")
    }

    @Test func anUnmarkedTestRunsOnThePool() {
        #expect(!Self.threadName().isEmpty)
        #expect(Self.threadName() != "bb-test-cpu")
    }
}
