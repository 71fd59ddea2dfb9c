import BeaconRuntime
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the fake services did, in order.
final class ServiceLog: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A service that runs until stopped (or until `finish()`), logging what happens.
final class FakeService: Service {
    let name: String
    let log: ServiceLog
    private let state = Mutex<(stopped: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init(_ name: String, log: ServiceLog) {
        self.name = name
        self.log = log
    }

    func run() async {
        log.add("run \(name)")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.stopped { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        // Winding down takes a moment: the next service must not be stopped before this one has ended.
        try? await Task.sleep(for: .milliseconds(20))
        log.add("ended \(name)")
    }

    func stop() async {
        log.add("stop \(name)")
        finish()
    }

    /// Ends `run()` (also what `stop()` does).
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopped = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}

/// Stands in for the process's signals: the test fires them.
final class FakeSignals: Sendable {
    private let state = Mutex<(signals: [Int32], handler: (@Sendable (Int32) -> Void)?, removed: Bool)>(
        ([], nil, false))

    var installer: ServiceGroup.SignalInstaller {
        { signals, handler in
            self.state.withLock { $0 = (signals, handler, false) }
            return { self.state.withLock { $0.removed = true } }
        }
    }

    var installed: [Int32] { state.withLock { $0.signals } }
    var removed: Bool { state.withLock { $0.removed } }

    /// Delivers a signal once the group has installed its handler (within 60 s); false if it never did.
    func fire(_ number: Int32) async throws -> Bool {
        for _ in 0..<6000 {
            if let handler = state.withLock({ $0.handler }) {
                handler(number)
                return true
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

@Suite struct ServiceGroupTests {
    /// Waits (60 s at most) until every service has logged its start.
    func waitUntilRunning(_ log: ServiceLog, _ count: Int) async throws {
        for _ in 0..<6000 where log.all.filter({ $0.hasPrefix("run ") }).count < count {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func aStopSignalStopsEveryServiceInReverseOrderEachEndingBeforeTheNext() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let services = ["source", "publisher", "loop"].map { FakeService($0, log: log) }
        let group = ServiceGroup(services, otherSignals: [SIGHUP], installSignals: signals.installer)
        let running = Task { await group.run() }
        try await waitUntilRunning(log, 3)
        #expect(Set(log.all) == ["run source", "run publisher", "run loop"])
        #expect(try await signals.fire(SIGTERM))
        #expect(await running.value == .signal(SIGTERM))
        #expect(
            Array(log.all.dropFirst(3)) == [
                "stop loop", "ended loop", "stop publisher", "ended publisher", "stop source", "ended source",
            ])
        #expect(Set(signals.installed) == [SIGTERM, SIGINT, SIGHUP])
        #expect(signals.removed)
    }

    @Test func aServiceThatEndsByItselfStopsTheOthersInReverseOrder() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let services = ["publisher", "source", "ticks"].map { FakeService($0, log: log) }
        let group = ServiceGroup(services, installSignals: signals.installer)
        let running = Task { await group.run() }
        try await waitUntilRunning(log, 3)
        services[1].finish()
        #expect(await running.value == .finished("source"))
        let stops = log.all.filter { $0.hasPrefix("stop ") }
        #expect(stops == ["stop ticks", "stop source", "stop publisher"])
        #expect(log.all.last == "ended publisher")
    }

    @Test func otherSignalsGoToTheHandlerAndStopNothing() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let reloads = ServiceLog()
        let service = FakeService("loop", log: log)
        let group = ServiceGroup(
            [service], otherSignals: [SIGHUP], onSignal: { reloads.add("signal \($0)") },
            installSignals: signals.installer)
        let running = Task { await group.run() }
        try await waitUntilRunning(log, 1)
        #expect(try await signals.fire(SIGHUP))
        #expect(try await signals.fire(SIGHUP))
        #expect(reloads.all == ["signal \(SIGHUP)", "signal \(SIGHUP)"])
        #expect(!log.all.contains("stop loop"))
        #expect(try await signals.fire(SIGINT))
        #expect(await running.value == .signal(SIGINT))
        #expect(log.all == ["run loop", "stop loop", "ended loop"])
    }
}

@Suite struct ServiceGroupStopTests {
    @Test func onStopHearsTheReasonOnceBeforeTheFirstStop() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let services = ["publisher", "loop"].map { FakeService($0, log: log) }
        let group = ServiceGroup(
            services, onStop: { log.add("onStop \($0)") }, installSignals: signals.installer)
        let running = Task { await group.run() }
        for _ in 0..<6000 where log.all.filter({ $0.hasPrefix("run ") }).count < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await signals.fire(SIGTERM))
        #expect(try await signals.fire(SIGINT))
        #expect(await running.value == .signal(SIGTERM))
        #expect(
            Array(log.all.dropFirst(2)) == [
                "onStop \(ServiceGroup.Reason.signal(SIGTERM))", "stop loop", "ended loop", "stop publisher",
                "ended publisher",
            ])
    }

    @Test func aTaskServiceIsCancelledByStopAndEndsTheGroupWhenItsBodyReturns() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let ticking = TaskService("tick") {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            log.add("tick cancelled")
        }
        let deadline = TaskService("deadline") { log.add("deadline passed") }
        let group = ServiceGroup([ticking, deadline], installSignals: signals.installer)
        #expect(await group.run() == .finished("deadline"))
        #expect(log.all == ["deadline passed", "tick cancelled"])
    }

    @Test func aStopOnlyServiceRunsUntilStoppedAndPerformsItsStopOnce() async throws {
        let log = ServiceLog()
        let source = StopOnlyService("source") { log.add("source stopped") }
        let running = Task { await source.run() }
        await source.stop()
        await source.stop()
        await running.value
        #expect(log.all == ["source stopped"])
    }
}

@Suite struct LatchTests {
    @Test func everyWaiterGetsTheFirstValue() async throws {
        let latch = Latch<Int>()
        let waiters = (0..<3).map { _ in Task { await latch.wait() } }
        #expect(latch.open(7))
        #expect(!latch.open(8))
        for waiter in waiters { #expect(await waiter.value == 7) }
        #expect(await latch.wait() == 7)
        #expect(latch.value == 7)
    }

    @Test func aCancelledWaiterReturnsNilAndTheLatchStaysUsable() async throws {
        let latch = Latch<Void>()
        let waiter = Task { await latch.wait() == nil }
        waiter.cancel()
        #expect(await waiter.value)
        #expect(!latch.isOpen)
        latch.open()
        #expect(latch.isOpen)
        #expect(await latch.wait() != nil)
    }
}

/// A service whose stop takes a long wind-down (a replay waiting for delivery) unless hurried.
final class SlowStoppingService: Service {
    let name = "publisher"
    let log: ServiceLog
    let hurried = Latch<Void>()
    let ended = Latch<Void>()

    init(log: ServiceLog) { self.log = log }

    func run() async {
        log.add("run \(name)")
        _ = await ended.wait()
    }

    func stop() async {
        log.add("stop \(name): waiting")
        // Ends only when hurried: a group that does not pass on the signal never returns (the test's bound).
        _ = await hurried.wait()
        log.add("stop \(name): hurried")
        ended.open()
    }
}

@Suite struct ServiceGroupHurryTests {
    /// The group stops because a service ended; a stop signal during the stop reaches the service that winds
    /// down (issue 32: SIGTERM was ignored while a replay waited for delivery at the end of its capture).
    @Test(.timeLimit(.minutes(2))) func aStopSignalDuringTheStopReachesOnStopSignalWhileStopping() async throws {
        let log = ServiceLog()
        let signals = FakeSignals()
        let slow = SlowStoppingService(log: log)
        let loop = FakeService("loop", log: log)
        let group = ServiceGroup(
            [slow, loop], onStop: { log.add("onStop \($0)") },
            onStopSignalWhileStopping: { number in
                log.add("hurry \(number)")
                slow.hurried.open()
            },
            installSignals: signals.installer)
        let running = Task { await group.run() }
        for _ in 0..<6000 where log.all.filter({ $0.hasPrefix("run ") }).count < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        loop.finish()
        for _ in 0..<6000 where !log.all.contains("stop publisher: waiting") {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await signals.fire(SIGTERM))
        #expect(await running.value == .finished("loop"))
        // The loop ended by itself (logged before the group hears of it), then the stop in reverse order.
        #expect(
            Array(log.all.dropFirst(2)) == [
                "ended loop", "onStop \(ServiceGroup.Reason.finished("loop"))", "stop loop", "stop publisher: waiting",
                "hurry \(SIGTERM)", "stop publisher: hurried",
            ])
    }
}
