import BeaconFormats
import BeaconRuntime
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LoopExecutorTests {
    static func currentThread() -> UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    @Test func aTaskThatPrefersItRunsOnItsNamedThreadAndBackAfterASuspension() async throws {
        let executor = try #require(LoopExecutor.start(name: "bb-loop-test"))
        defer { executor.shutdown() }
        let names = await withTaskExecutorPreference(executor) { () async -> [String] in
            var names = [DedicatedThreadTests.threadName()]
            // Resumed from another thread (the pool's timer): back on the executor's thread.
            try? await Task.sleep(for: .milliseconds(20))
            names.append(DedicatedThreadTests.threadName())
            return names
        }
        #expect(names == ["bb-loop-test", "bb-loop-test"])
    }

    final class Probe: Sendable {
        let order = Mutex<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
    }

    @Test func jobsRunOneAtATime() async throws {
        let executor = try #require(LoopExecutor.start(name: "bb-loop-order"))
        defer { executor.shutdown() }
        let probe = Probe()
        await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask { [probe] in
                        if probe.running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                            probe.overlapped.store(true, ordering: .relaxed)
                        }
                        probe.order.withLock { $0.append(index) }
                        // Long enough for another thread to overlap it, if jobs could run side by side.
                        usleep(200)
                        probe.running.subtract(1, ordering: .acquiringAndReleasing)
                    }
                }
            }
        }
        let didOverlap = probe.overlapped.load(ordering: .relaxed)
        let ran = probe.order.withLock { $0.sorted() }
        #expect(!didOverlap)
        #expect(ran == Array(0..<50))
    }

    /// The reading thread's case: a batch offered to the mailbox resumes the loop waiting in `next()`, and the
    /// loop's work on it runs on the offering thread, not on the executor's.
    @Test func aHostedOfferRunsTheResumedLoopOnTheOfferingThread() async throws {
        let executor = try #require(LoopExecutor.start(name: "bb-loop-host"))
        defer { executor.shutdown() }
        let mailbox = EventMailbox<Int>(capacity: 16)
        let sink = HostedEventSink(mailbox: mailbox, executor: executor)
        let offeringThread = Atomic<UInt>(0)
        let consumer = Task {
            await withTaskExecutorPreference(executor) { () async -> (UInt, String, Int) in
                let item = await mailbox.next()
                guard case let .events(batches) = item else { return (0, "", -1) }
                return (Self.currentThread(), DedicatedThreadTests.threadName(), batches.reduce(0) { $0 + $1.count })
            }
        }
        // Until the consumer waits in next(): offered earlier, the batch would be taken without a resume.
        try await Task.sleep(for: .milliseconds(100))
        let started = DedicatedThread.start(name: "bb-host-test") {
            offeringThread.store(Self.currentThread(), ordering: .releasing)
            let event = CapturedHCIEvent(timestamp: 1, bytes: [0x3E, 0x00])
            _ = sink.offer([event, event, event])
        }
        #expect(started == 0)
        let (thread, name, count) = await consumer.value
        #expect(count == 3)
        #expect(name == "bb-host-test")
        let offering = offeringThread.load(ordering: .acquiring)
        #expect(thread == offering)
    }

    @Test func aJobAfterShutdownStillRuns() async throws {
        let executor = try #require(LoopExecutor.start(name: "bb-loop-late"))
        await withTaskExecutorPreference(executor) {}
        executor.shutdown()
        try await Task.sleep(for: .milliseconds(50))
        let name = await withTaskExecutorPreference(executor) { DedicatedThreadTests.threadName() }
        #expect(name == "bb-loop-late")
        executor.shutdown()
    }
}
