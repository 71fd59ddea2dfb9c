import BeaconFormats
import Testing

@Suite struct ScanSupervisorTests {
    private func scanning(stallTimeout: Double = 30, at time: Double = 0) -> ScanSupervisor {
        var supervisor = ScanSupervisor(policy: .init(stallTimeout: stallTimeout, initialBackoff: 1, maximumBackoff: 8))
        supervisor.scanStarted(at: time)
        return supervisor
    }

    @Test func reportsKeepTheScanHealthy() {
        var supervisor = scanning()
        for second in stride(from: 10.0, through: 300, by: 10) {
            supervisor.reportReceived(at: second)
            #expect(supervisor.tick(at: second + 5) == nil)
        }
        #expect(supervisor.nextDeadline == 330)
    }

    @Test func stallRestartsTheScanFirst() {
        var supervisor = scanning()
        #expect(supervisor.tick(at: 29.9) == nil)
        #expect(supervisor.tick(at: 30) == .restartScan(reason: .stalled(seconds: 30)))
        #expect(supervisor.isRecovering)
        // While the step runs, ticks and faults start nothing else.
        #expect(supervisor.tick(at: 100) == nil)
        #expect(supervisor.faultOccurred(.readFailed(errno: 5), at: 100) == nil)
    }

    @Test func stallAgainWithoutAReportAfterARestartPowerCycles() {
        var supervisor = scanning()
        _ = supervisor.tick(at: 30)
        supervisor.scanStarted(at: 31)
        #expect(supervisor.tick(at: 61) == .powerCycle(reason: .stalled(seconds: 30), attempt: 1))
    }

    @Test func stallsWithoutReportsPowerCycleAtGrowingIntervals() {
        var supervisor = scanning(stallTimeout: 10)
        var now = 0.0
        var intervals: [Double] = []
        var attempts: [Int] = []
        for _ in 0..<9 {
            let deadline = supervisor.nextDeadline!
            intervals.append(deadline - now)
            #expect(supervisor.tick(at: deadline - 0.01) == nil)
            switch supervisor.tick(at: deadline) {
            case .restartScan?: attempts.append(0)
            case let .powerCycle(_, attempt)?: attempts.append(attempt)
            default: Issue.record("a stall must start a recovery")
            }
            now = deadline + 1
            supervisor.scanStarted(at: now)
        }
        // Restart, then power cycles; the timeout doubles after the second quiet recovery, capped at 32x.
        #expect(attempts == [0, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(intervals == [10, 10, 20, 40, 80, 160, 320, 320, 320])
        supervisor.reportReceived(at: now + 1)
        #expect(supervisor.quietRecoveries == 0)
        #expect(supervisor.nextDeadline == now + 11)
    }

    @Test func aReportAfterARestartResetsTheEscalation() {
        var supervisor = scanning()
        _ = supervisor.tick(at: 30)
        supervisor.scanStarted(at: 31)
        supervisor.reportReceived(at: 40)
        #expect(supervisor.tick(at: 70) == .restartScan(reason: .stalled(seconds: 30)))
    }

    @Test func failedRestartEscalatesToPowerCycleAtOnce() {
        var supervisor = scanning()
        _ = supervisor.tick(at: 30)
        let next = supervisor.recoveryFailed(at: 30.1, error: "LE Set Scan Enable: status 0x03")
        #expect(next == .powerCycle(reason: .recoveryFailed("LE Set Scan Enable: status 0x03"), attempt: 1))
    }

    @Test func failedPowerCyclesBackOffExponentiallyUpToTheCap() throws {
        var supervisor = scanning()
        #expect(
            supervisor.faultOccurred(.hardwareError(code: 0x01), at: 10)
                == .powerCycle(reason: .fault(.hardwareError(code: 0x01)), attempt: 1))
        var now = 10.0
        var waits: [Double] = []
        for attempt in 1...6 {
            #expect(supervisor.recoveryFailed(at: now, error: "ioctl(HCIDEVUP): EIO") == nil)
            let deadline = try #require(supervisor.nextDeadline)
            waits.append(deadline - now)
            #expect(supervisor.tick(at: deadline - 0.01) == nil)
            #expect(
                supervisor.tick(at: deadline)
                    == .powerCycle(
                        reason: .recoveryFailed("ioctl(HCIDEVUP): EIO"),
                        attempt: attempt + 1))
            now = deadline
        }
        #expect(waits == [1, 2, 4, 8, 8, 8])
        supervisor.scanStarted(at: now + 1)
        #expect(!supervisor.isRecovering)
    }

    @Test func removedAdapterIsReopenedWithBackoffUntilItReturns() {
        var supervisor = scanning()
        #expect(
            supervisor.faultOccurred(.adapterRemoved, at: 5) == .reopen(reason: .fault(.adapterRemoved), attempt: 1))
        #expect(supervisor.recoveryFailed(at: 5, error: "not found", adapterGone: true) == nil)
        #expect(supervisor.tick(at: 6) == .reopen(reason: .recoveryFailed("not found"), attempt: 2))
        #expect(supervisor.recoveryFailed(at: 6, error: "not found", adapterGone: true) == nil)
        #expect(supervisor.nextDeadline == 8)
        #expect(supervisor.tick(at: 8) == .reopen(reason: .recoveryFailed("not found"), attempt: 3))
        supervisor.scanStarted(at: 8.5)
        supervisor.reportReceived(at: 9)
        #expect(supervisor.nextDeadline == 39)
    }

    @Test func restartFailingBecauseTheAdapterIsGoneReopens() {
        var supervisor = scanning()
        _ = supervisor.faultOccurred(.readFailed(errno: 5), at: 1)
        #expect(
            supervisor.recoveryFailed(at: 1, error: "gone", adapterGone: true)
                == .reopen(reason: .recoveryFailed("gone"), attempt: 1))
    }

    @Test func zeroStallTimeoutNeverStalls() {
        var supervisor = scanning(stallTimeout: 0)
        #expect(supervisor.nextDeadline == nil)
        #expect(supervisor.tick(at: 1_000_000) == nil)
    }

    @Test func idleSupervisorDoesNothing() {
        var supervisor = ScanSupervisor(policy: .init(stallTimeout: 10))
        #expect(supervisor.tick(at: 100) == nil)
        #expect(supervisor.recoveryFailed(at: 100, error: "x") == nil)
        #expect(supervisor.nextDeadline == nil)
    }
}

@Suite struct ScanSupervisorConnectionTests {
    @Test func anLEConnectionEnablesTheScanAgainSoonAfter() {
        var supervisor = ScanSupervisor(policy: .init(stallTimeout: 60))
        supervisor.scanStarted(at: 0)
        supervisor.reportReceived(at: 5)
        supervisor.scanTakenOver(at: 10)
        #expect(supervisor.nextDeadline == 10 + ScanSupervisor.takeOverSettle)
        #expect(supervisor.tick(at: 10.1) == nil)
        let action = supervisor.tick(at: 10 + ScanSupervisor.takeOverSettle)
        #expect(action == .restartScan(reason: .scanTakenOver))
        supervisor.scanStarted(at: 10.6)
        // Not a fault: a stall after it restarts the scan first, it does not power-cycle.
        #expect(supervisor.quietRecoveries == 0)
        #expect(supervisor.rescanAt == nil)
        #expect(supervisor.nextDeadline == 10.6 + 60)
        #expect(supervisor.tick(at: 70.7) == .restartScan(reason: .stalled(seconds: 60.1)))
    }

    @Test func aConnectionDuringARecoveryChangesNothing() {
        var supervisor = ScanSupervisor(policy: .init(stallTimeout: 10))
        supervisor.scanStarted(at: 0)
        #expect(supervisor.tick(at: 10) == .restartScan(reason: .stalled(seconds: 10)))
        supervisor.scanTakenOver(at: 10.1)
        #expect(supervisor.rescanAt == nil)
    }

    @Test func connectionCompleteEventsAreRecognised() {
        let complete = CapturedHCIEvent(timestamp: 0, bytes: [0x3E, 0x13, 0x01, 0x00])
        let enhanced = CapturedHCIEvent(timestamp: 0, bytes: [0x3E, 0x1F, 0x0A, 0x02])
        let report = CapturedHCIEvent(timestamp: 0, bytes: [0x3E, 0x0C, 0x02, 0x01])
        #expect(complete.isLEConnectionComplete && enhanced.isLEConnectionComplete)
        #expect(!report.isLEConnectionComplete)
        #expect(!CapturedHCIEvent(timestamp: 0, bytes: [0x0E, 0x04]).isLEConnectionComplete)
    }
}
