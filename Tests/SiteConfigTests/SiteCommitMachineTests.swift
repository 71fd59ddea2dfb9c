import BeaconConfig
import BeaconConfigReading
import SiteConfig
import Testing
import YAMLConfig

/// The commit machine: apply, probe, commit on the probe's return; rollback at the bound; a refusal or a
/// rollback not tried again; what runs already ignored; a push during an attempt waits for its end.
@Suite struct SiteCommitMachineTests {
    let verifier: SiteVerifier
    init() throws { verifier = try SiteVerifierTests().verifier() }

    func payload(_ version: Int64, region: String = "office") -> [UInt8] {
        let yaml = SiteVerifierTests.shared.replacingOccurrences(of: "name: office", with: "name: \(region)")
        return Array(
            SiteEnvelope.signed(site: "house", version: version, yaml: yaml, key: SiteVerifierTests.key).json.utf8)
    }

    func statuses(_ actions: [SiteCommitMachine.Action]) -> [SiteStatus] {
        actions.compactMap {
            switch $0 {
            case .publish(let status), .probe(let status, _): status
            default: nil
            }
        }
    }

    @Test func appliedThenProbedThenCommittedWhenTheProbeComesBack() throws {
        var machine = SiteCommitMachine(gateway: "gw-kitchen", site: "house", applyTimeout: 30, running: nil)
        let applied = machine.received(config: payload(3), verifier: verifier, now: 100, time: 1)
        guard case .apply(let accepted)? = applied.first else { throw TestFailure("not applied: \(applied)") }
        #expect(accepted.configuration.regions.map(\.name) == ["office"])
        #expect(statuses(applied).map(\.state) == [.applying])
        #expect(machine.tick(verifier: verifier, now: 105, time: 2).isEmpty, "no probe before a third of the bound")
        let probe = machine.tick(verifier: verifier, now: 110, time: 3)
        let sent = try #require(statuses(probe).first)
        #expect(sent.state == .applying && sent.subject == 3)
        // Someone else's status, or the first `applying` without the nonce, commits nothing.
        var plain = sent
        plain.message = nil
        #expect(machine.received(status: Array(plain.json.utf8), verifier: verifier, now: 111, time: 4).isEmpty)
        let done = machine.received(status: Array(sent.json.utf8), verifier: verifier, now: 111, time: 4)
        guard case .commit(let envelope)? = done.first else { throw TestFailure("not committed: \(done)") }
        #expect(envelope.version == 3 && machine.runningVersion == 3)
        #expect(statuses(done).map(\.state) == [.applied])
        // The retained copy after a reconnect: nothing to do.
        #expect(machine.received(config: payload(3), verifier: verifier, now: 120, time: 5).isEmpty)
    }

    @Test func rolledBackAtTheBoundAndNotTriedAgain() throws {
        var machine = SiteCommitMachine(gateway: "gw-kitchen", site: "house", applyTimeout: 30, running: nil)
        _ = machine.received(config: payload(3), verifier: verifier, now: 100, time: 1)
        _ = machine.tick(verifier: verifier, now: 110, time: 2)
        // A newer push during the attempt waits for its end.
        #expect(machine.received(config: payload(4, region: "hall"), verifier: verifier, now: 112, time: 2).isEmpty)
        let back = machine.tick(verifier: verifier, now: 130, time: 3)
        guard case .rollBack? = back.first else { throw TestFailure("no rollback: \(back)") }
        let status = try #require(statuses(back).first)
        #expect(status.state == .rolledBack && status.version == 0 && status.subject == 3)
        #expect(status.reason == "broker_unreachable")
        #expect(machine.runningVersion == 0)
        // Then the waiting push is applied.
        guard case .apply(let next)? = back.dropFirst(2).first else { throw TestFailure("waiting push: \(back)") }
        #expect(next.envelope.version == 4)
        _ = machine.tick(verifier: verifier, now: 200, time: 4)
        _ = machine.tick(verifier: verifier, now: 200, time: 4)
        // The rolled-back version 3 again (the broker repeats it): ignored.
        #expect(machine.received(config: payload(3), verifier: verifier, now: 201, time: 5).isEmpty)
    }

    @Test func aRefusalIsPublishedOnceWithTheRunningVersion() throws {
        var machine = SiteCommitMachine(gateway: "gw-kitchen", site: "house", applyTimeout: 30, running: nil)
        var bad = Array(String(decoding: payload(3), as: UTF8.self).replacingOccurrences(of: "-70", with: "-40").utf8)
        let refused = machine.received(config: bad, verifier: verifier, now: 1, time: 1)
        let status = try #require(statuses(refused).first)
        #expect(status.state == .refused && status.reason == "hash_mismatch" && status.subject == 3)
        #expect(status.version == 0)
        #expect(!refused.contains { if case .apply = $0 { true } else { false } })
        #expect(machine.received(config: bad, verifier: verifier, now: 2, time: 2).isEmpty)
        bad.removeAll()
        #expect(machine.received(config: bad, verifier: verifier, now: 3, time: 3).isEmpty, "a cleared topic")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
