/// What a gateway does with site configurations, as a state machine that takes inputs with their time and
/// returns what to do (the daemon performs it: applies, writes the state file, publishes). **Tests then
/// commits**: a verified configuration is applied at once and reported `applying`; after a probation of a third
/// of `apply_timeout_s` the gateway publishes a probe (its `applying` status again, with a nonce) and commits
/// when the broker hands the probe back; when `apply_timeout_s` passes first, it rolls back to the configuration
/// it ran before and reports `rolled_back` (published once the broker is back).
///
/// A configuration once refused or rolled back (the same version and hash) is not tried again in this run: the
/// broker repeats the retained one on every reconnect. One arriving during an attempt waits for its end.
public struct SiteCommitMachine: Sendable {
    public enum Action: Sendable {
        /// Apply this configuration now (keep the running one for a rollback).
        case apply(SiteAcceptance)
        /// Publish this status (retained on the gateway's status topic); held until connected.
        case publish(SiteStatus)
        /// Publish this probe and expect it back; held at most `lifetime` seconds.
        case probe(SiteStatus, lifetime: Double)
        /// The round trip came back: keep this envelope as the last good one (the state file).
        case commit(SiteEnvelope)
        /// Go back to the configuration that ran before the attempt.
        case rollBack
    }

    public struct Attempt: Sendable {
        public var envelope: SiteEnvelope
        public var probeAt: Double
        public var deadline: Double
        public var nonce: String
        public var probeSent = false
    }

    public let gateway: String
    public let site: String
    public let applyTimeout: Double
    /// The committed envelope (nil: the local file alone).
    public private(set) var running: SiteEnvelope?
    public private(set) var attempt: Attempt?
    /// `version:sha256` of the configurations refused or rolled back in this run.
    private var settled: Set<String> = []
    /// The newest configuration that arrived during an attempt.
    private var waiting: [UInt8]?
    private var probes = 0

    public init(gateway: String, site: String, applyTimeout: Double, running: SiteEnvelope?) {
        self.gateway = gateway
        self.site = site
        self.applyTimeout = applyTimeout
        self.running = running
    }

    public var runningVersion: Int64 { running?.version ?? 0 }

    /// The status of what runs now (published at start and after every connect).
    public func status(time: Double) -> SiteStatus {
        SiteStatus(
            gateway: gateway, site: site, version: runningVersion, sha256: running?.sha256 ?? "",
            state: running == nil ? .local : .applied, time: time)
    }

    /// A payload on the configuration topic (`now`: monotonic seconds, `time`: the wall clock for the status).
    public mutating func received(config payload: [UInt8], verifier: SiteVerifier, now: Double, time: Double)
        -> [Action]
    {
        guard !payload.isEmpty else { return [] }
        if attempt != nil {
            waiting = payload
            return []
        }
        let parsed = try? SiteEnvelope.parse(payload).get()
        if let parsed, let running, parsed.version == running.version, parsed.sha256 == running.sha256 {
            return []  // what runs already (the retained copy after a reconnect)
        }
        let identity =
            parsed.map { "\($0.version):\($0.sha256)" } ?? "payload:\(SiteDigest.hex(SiteDigest.sha256(payload)))"
        guard !settled.contains(identity) else { return [] }
        switch verifier.verify(payload, running: runningVersion) {
        case .failure(let refusal):
            settled.insert(identity)
            var message = ([refusal.message] + refusal.problems).joined(separator: "; ")
            if message.count > 1_000 { message = String(message.prefix(1_000)) + "..." }
            return [
                .publish(
                    SiteStatus(
                        gateway: gateway, site: site, version: runningVersion, sha256: running?.sha256 ?? "",
                        state: .refused, subject: parsed?.version, reason: refusal.reason.rawValue, message: message,
                        time: time))
            ]
        case .success(let acceptance):
            probes += 1
            attempt = Attempt(
                envelope: acceptance.envelope, probeAt: now + applyTimeout / 3, deadline: now + applyTimeout,
                nonce: "\(gateway)-\(acceptance.envelope.version)-\(probes)")
            return [.apply(acceptance), .publish(applyingStatus(acceptance.envelope, message: nil, time: time))]
        }
    }

    /// A payload on the gateway's own status topic: the probe coming back commits the attempt.
    public mutating func received(status payload: [UInt8], verifier: SiteVerifier, now: Double, time: Double)
        -> [Action]
    {
        guard let attempt, attempt.probeSent, let status = SiteStatus.parse(payload), status.gateway == gateway,
            status.state == .applying, status.subject == attempt.envelope.version,
            status.message == probeMessage(attempt.nonce)
        else { return [] }
        running = attempt.envelope
        self.attempt = nil
        let done: [Action] = [
            .commit(attempt.envelope),
            .publish(
                SiteStatus(
                    gateway: gateway, site: site, version: attempt.envelope.version, sha256: attempt.envelope.sha256,
                    state: .applied, time: time)),
        ]
        return done + resume(verifier: verifier, now: now, time: time)
    }

    /// Once a second: the probe when the probation ends, the rollback when the bound passes.
    public mutating func tick(verifier: SiteVerifier, now: Double, time: Double) -> [Action] {
        guard var attempt else { return [] }
        if now >= attempt.deadline {
            settled.insert("\(attempt.envelope.version):\(attempt.envelope.sha256)")
            self.attempt = nil
            let status = SiteStatus(
                gateway: gateway, site: site, version: runningVersion, sha256: running?.sha256 ?? "",
                state: .rolledBack, subject: attempt.envelope.version, reason: "broker_unreachable",
                message:
                    "no broker round trip within \(Int(applyTimeout)) s of applying version \(attempt.envelope.version); "
                    + "back on version \(runningVersion)", time: time)
            return [.rollBack, .publish(status)] + resume(verifier: verifier, now: now, time: time)
        }
        if !attempt.probeSent, now >= attempt.probeAt {
            attempt.probeSent = true
            self.attempt = attempt
            return [
                .probe(
                    applyingStatus(attempt.envelope, message: probeMessage(attempt.nonce), time: time),
                    lifetime: max(0.1, attempt.deadline - now))
            ]
        }
        return []
    }

    private mutating func resume(verifier: SiteVerifier, now: Double, time: Double) -> [Action] {
        guard let next = waiting else { return [] }
        waiting = nil
        return received(config: next, verifier: verifier, now: now, time: time)
    }

    private func applyingStatus(_ envelope: SiteEnvelope, message: String?, time: Double) -> SiteStatus {
        SiteStatus(
            gateway: gateway, site: site, version: runningVersion, sha256: running?.sha256 ?? "", state: .applying,
            subject: envelope.version, message: message, time: time)
    }

    private func probeMessage(_ nonce: String) -> String { "round trip probe \(nonce)" }
}
