import BeaconConfig
import BeaconConfigReading
import BeaconEvents
import BeaconModel
import BeaconRuntime
import SiteConfig
import Synchronization
import YAMLConfig

/// Inbound messages on the site topics, handed from the subscription's task to the loop (its tick).
final class SiteInbox: Sendable {
    private let messages = Mutex<[InboundMessage]>([])
    /// Messages kept at most between two ticks (the oldest dropped): a flood cannot grow memory.
    static let capacity = 64

    func add(_ message: InboundMessage) {
        messages.withLock {
            if $0.count >= SiteInbox.capacity { $0.removeFirst() }
            $0.append(message)
        }
    }

    func takeAll() -> [InboundMessage] {
        messages.withLock { all in
            defer { all.removeAll() }
            return all
        }
    }
}

/// The site configuration inside the daemon (`site:`, docs/site-config.md): the commit machine, the checks,
/// the configuration that ran before an attempt (for a rollback). Owned by the loop.
final class DaemonSite {
    let settings: SiteSettings
    let topics: SiteTopics
    let gateway: String
    var verifier: SiteVerifier
    var machine: SiteCommitMachine
    let inbox = SiteInbox()
    /// What ran before the attempt in progress.
    var previous: GatewayConfiguration?
    var announced = false

    init(settings: SiteSettings, topics: SiteTopics, gateway: String, verifier: SiteVerifier, running: SiteEnvelope?) {
        self.settings = settings
        self.topics = topics
        self.gateway = gateway
        self.verifier = verifier
        self.machine = SiteCommitMachine(
            gateway: gateway, site: settings.id, applyTimeout: settings.applyTimeout, running: running)
    }

    /// At start: the key, the local tree, and the last committed version from the state file merged into
    /// `configuration` (the local file alone when there is none, or when it is refused: logged). Nil when there
    /// is no `site:` section; the exit code when the key cannot be read.
    static func prepare(_ configuration: inout GatewayConfiguration, path: String, logger: Logger)
        -> Result<DaemonSite?, RetainedMessages.ExitStatus>
    {
        guard let settings = configuration.site else { return .success(nil) }
        let key: SiteKey
        do { key = try SiteKey.read(path: settings.keyFile) } catch {
            Output.stderr("beaconbridge: site.key_file: \(error)")
            return .failure(RetainedMessages.ExitStatus(ExitCode.config))
        }
        guard case .success(let root) = ConfigurationLoader.loadDocument(path: path) else {
            return .failure(RetainedMessages.ExitStatus(ExitCode.config))
        }
        let verifier = SiteVerifier(
            settings: settings, key: key, localRoot: root, localFile: path,
            environment: ConfigurationLoader.currentEnvironment())
        let topics = SiteTopics(prefix: configuration.topics.prefix, site: settings.id)
        var running: SiteEnvelope?
        switch SiteStateFile.read(path: settings.stateFile, maxBytes: settings.maxBytes) {
        case .success(nil):
            logger.info(
                "site: no committed site configuration yet; running on the local file",
                metadata: ["site": "\(settings.id)"])
        case .success(let bytes?):
            switch verifier.verify(bytes, running: 0) {
            case .success(let accepted):
                running = accepted.envelope
                configuration = accepted.configuration
                logger.notice(
                    "site: starting on the last committed site configuration",
                    metadata: [
                        "site": "\(settings.id)", "version": "\(accepted.envelope.version)",
                        "sha256": "\(accepted.envelope.sha256)",
                    ])
            case .failure(let refusal):
                logger.error(
                    "site: the state file is refused; starting on the local file alone",
                    metadata: [
                        "file": "\(settings.stateFile)", "reason": "\(refusal.reason.rawValue)",
                        "problem": "\(refusal.message)",
                    ])
            }
        case .failure(let error):
            logger.error(
                "site: the state file cannot be read; starting on the local file alone", metadata: ["error": "\(error)"]
            )
        }
        return .success(
            DaemonSite(
                settings: settings, topics: topics, gateway: configuration.gateway.id, verifier: verifier,
                running: running))
    }
}

extension Daemon {
    /// Subscribes to the site's configuration topic and this gateway's own status topic (the probe's round
    /// trip); a service (nil without `site:`) that hands the messages to the loop's inbox.
    func siteSubscriptionService() -> TaskService? {
        guard let site else { return nil }
        let streams = [site.topics.config, site.topics.status(gateway: site.gateway)].map {
            publisher.subscribe($0, qos: 1)
        }
        logger.notice(
            "site configuration on", metadata: ["site": "\(site.settings.id)", "topic": "\(site.topics.config)"])
        return TaskService("site") { [inbox = site.inbox] in
            await withTaskGroup(of: Void.self) { group in
                for stream in streams { group.addTask { for await message in stream { inbox.add(message) } } }
            }
        }
    }

    /// On the loop's tick: the first status, the messages that came in, then the machine's timers.
    func handleSite() async {
        guard let site else { return }
        let time = SystemClock.realtime()
        if !site.announced {
            site.announced = true
            publishSiteStatus(site.machine.status(time: time), lifetime: 86_400)
        }
        for message in site.inbox.takeAll() {
            let now = SystemClock.monotonic()
            let actions =
                message.topic == site.topics.config
                ? site.machine.received(config: message.payload, verifier: site.verifier, now: now, time: time)
                : site.machine.received(status: message.payload, verifier: site.verifier, now: now, time: time)
            await perform(actions, site: site)
        }
        await perform(site.machine.tick(verifier: site.verifier, now: SystemClock.monotonic(), time: time), site: site)
    }

    private func perform(_ actions: [SiteCommitMachine.Action], site: DaemonSite) async {
        for action in actions {
            switch action {
            case .apply(let accepted):
                site.previous = configuration
                let ok = await apply(accepted.configuration)
                logger.notice(
                    ok ? "site: configuration applied; testing the broker round trip" : "site: apply failed",
                    metadata: [
                        "version": "\(accepted.envelope.version)", "sha256": "\(accepted.envelope.sha256)",
                        "regions": "\(accepted.configuration.regions.count)",
                        "timeout_s": "\(Int(site.settings.applyTimeout))",
                    ])
            case .publish(let status):
                if status.state == .refused {
                    logger.error(
                        "site: configuration refused",
                        metadata: [
                            "version": "\(status.subject.map(String.init) ?? "?")", "reason": "\(status.reason ?? "")",
                            "problem": "\(status.message ?? "")", "running": "\(status.version)",
                        ])
                }
                publishSiteStatus(status, lifetime: 86_400)
            case .probe(let status, let lifetime):
                publishSiteStatus(status, lifetime: lifetime)
            case .commit(let envelope):
                site.previous = nil
                if let error = SiteStateFile.write(envelope.json, to: site.settings.stateFile) {
                    logger.error("site: cannot keep the committed configuration", metadata: ["error": "\(error)"])
                }
                logger.notice(
                    "site: configuration committed",
                    metadata: ["version": "\(envelope.version)", "sha256": "\(envelope.sha256)"])
            case .rollBack:
                if let previous = site.previous { await apply(previous) }
                site.previous = nil
                logger.warning(
                    "site: no broker round trip within the bound; rolled back",
                    metadata: [
                        "running": "\(site.machine.runningVersion)", "timeout_s": "\(Int(site.settings.applyTimeout))",
                    ])
            }
        }
    }

    /// The site configuration's Home Assistant entities, on this gateway's status topic (none without `site:`).
    func siteDiscovery(_ discovery: HomeAssistantDiscovery) -> [ControlMessage] {
        guard let site else { return [] }
        return discovery.siteMessages(statusTopic: site.topics.status(gateway: site.gateway))
    }

    private func publishSiteStatus(_ status: SiteStatus, lifetime: Double) {
        guard let site else { return }
        publisher.publishReply(
            ControlMessage(
                topic: site.topics.status(gateway: site.gateway), payload: status.json, qos: 1, retain: true),
            lifetime: lifetime)
    }

    /// For SIGHUP: the local file just read, joined with the running site configuration (checked again with
    /// it); the problems otherwise.
    func siteMerged(_ loaded: GatewayConfiguration) -> Result<GatewayConfiguration, SiteRefusal> {
        guard let site, let running = site.machine.running else { return .success(loaded) }
        guard case .success(let root) = ConfigurationLoader.loadDocument(path: options.config.path) else {
            return .failure(SiteRefusal(.invalid, "the local file cannot be read again"))
        }
        site.verifier.localRoot = root
        return site.verifier.check(running).map(\.configuration)
    }
}
