import BeaconConfig
import BeaconConfigReading
import BeaconModel
import BeaconRuntime
import SiteConfig
import YAMLConfig

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge site push FILE` and `beaconbridge site status` (docs/site-config.md): publish the site's
/// shared configuration, signed, retained on `<prefix>/<site>/site/config`, and list what every gateway
/// reported on `<prefix>/<site>/site/status/<gateway>`.
enum SiteCommand {
    static let help = """
        Usage: beaconbridge site push FILE [--config FILE] [--version N] [--wait S]
               beaconbridge site status [--config FILE] [--wait S]

        push    checks FILE (the site's shared part: formats, distance, tracking, regions, beacons, devices,
                telemetry, rooms) with this gateway's own file as every gateway will, numbers it (the published
                version + 1, or --version N), signs it with the key in site.key_file and publishes it retained on
                <prefix>/<site>/site/config; refuses to publish what a gateway would refuse.
        status  lists every gateway's site status (version, state, reason) and the published version.
        --config FILE  the gateway's own file (its site:, mqtt: and topics: sections are used)
        --version N    the version to publish (it must be newer than the published one)
        --wait S       wait at most S seconds for the broker (default 5)
        Exit codes: 0 ok, 64 usage, 65 the site configuration is refused (the reason on stderr), 66 FILE
        missing, 69 broker unreachable, 78 invalid configuration or key.
        """

    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case "push": return push(Array(arguments.dropFirst()))
        case "status": return status(Array(arguments.dropFirst()))
        case "--help", "-h":
            Output.stdout(help)
            return ExitCode.ok
        default:
            Output.stderr("beaconbridge site: a subcommand is required (push, status)\n\n\(help)")
            return ExitCode.usage
        }
    }

    /// What both subcommands load: the local file and its `site:` section, the broker password, the wait.
    struct Context {
        var configuration: GatewayConfiguration
        var settings: SiteSettings
        var path: String
        var password: String?
        var wait: Double
        var values: [String: String]
        var topics: SiteTopics { SiteTopics(prefix: configuration.topics.prefix, site: settings.id) }
    }

    static func context(_ arguments: [String], command: String, valued: [String]) throws(RetainedMessages.ExitStatus)
        -> Context
    {
        let line: ConfigCommandLine
        switch ConfigCommandLine.parse(
            arguments, command: command, help: help, valued: valued + ["--wait"],
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): line = parsed
        case .exit(let code): throw RetainedMessages.ExitStatus(code)
        }
        var wait = 5.0
        if let text = line.values["--wait"] {
            guard let value = Double(text), value.isFinite, value > 0, value <= 600 else {
                throw RetainedMessages.ExitStatus(
                    ConfigCommandLine.badValue("--wait needs seconds (0-600)", command: command, help: help))
            }
            wait = value
        }
        let configuration: GatewayConfiguration
        switch line.location.load(command: command) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let code): throw RetainedMessages.ExitStatus(code)
        }
        guard let settings = configuration.site else {
            Output.stderr(
                "beaconbridge \(command): \(line.location.path) has no `site:` section (id and key_file; "
                    + "docs/site-config.md)")
            throw RetainedMessages.ExitStatus(ExitCode.config)
        }
        let password = try RetainedMessages.password(configuration, command: command)
        return Context(
            configuration: configuration, settings: settings, path: line.location.path, password: password,
            wait: wait, values: line.values)
    }

    // MARK: push

    static func push(_ arguments: [String]) -> Int32 {
        let command = "site push"
        if arguments.contains("--help") || arguments.contains("-h") {
            Output.stdout(help)
            return ExitCode.ok
        }
        guard let file = arguments.first, !file.hasPrefix("-") else {
            Output.stderr("beaconbridge \(command): the site file is required (site push FILE)\n\n\(help)")
            return ExitCode.usage
        }
        let context: Context
        do { context = try self.context(Array(arguments.dropFirst()), command: command, valued: ["--version"]) } catch {
            return error.code
        }
        let requested: Int64?
        if let text = context.values["--version"] {
            guard let value = Int64(text), value >= 1 else {
                return ConfigCommandLine.badValue("--version needs a positive number", command: command, help: help)
            }
            requested = value
        } else {
            requested = nil
        }
        let settings = context.settings
        let key: SiteKey
        do { key = try SiteKey.read(path: settings.keyFile) } catch {
            Output.stderr("beaconbridge \(command): \(error)")
            return ExitCode.config
        }
        guard let bytes = LocalFiles.readBytes(file, maxBytes: settings.maxBytes) else {
            let why = errno == EFBIG ? "larger than site.max_bytes (\(settings.maxBytes))" : LocalFiles.lastError()
            Output.stderr("beaconbridge \(command): cannot read \(file): \(why)")
            return errno == ENOENT ? ExitCode.noInput : ExitCode.dataError
        }
        guard let yaml = String(validating: bytes, as: UTF8.self) else {
            Output.stderr("beaconbridge \(command): \(file) is not UTF-8 text")
            return ExitCode.dataError
        }
        let localRoot: ConfigNode
        switch ConfigurationLoader.loadDocument(path: context.path) {
        case .success(let root): localRoot = root
        case .failure(let errors):
            for line in errors.lines { Output.stderr(line) }
            return ExitCode.config
        }
        let verifier = SiteVerifier(
            settings: settings, key: key, localRoot: localRoot, localFile: context.path,
            environment: ConfigurationLoader.currentEnvironment())
        return AsyncMain.block {
            let session: RetainedMessages.Session
            switch RetainedMessages.Session.start(
                context.configuration, password: context.password, clientPrefix: "beaconbridge-site", command: command)
            {
            case .success(let started): session = started
            case .failure(let status): return status.code
            }
            let code = await publish(
                session: session, context: context, verifier: verifier, key: key, yaml: yaml, requested: requested)
            await session.client.stop()
            return code
        }
    }

    /// Reads the published version, checks, publishes and waits for the broker's copy; the exit code.
    static func publish(
        session: RetainedMessages.Session, context: Context, verifier: SiteVerifier, key: SiteKey, yaml: String,
        requested: Int64?
    ) async -> Int32 {
        let command = "site push"
        let settings = context.settings
        let topics = context.topics
        if let outcome = await session.settle(filters: [topics.config], wait: context.wait, command: command) {
            return outcome
        }
        let settled = session.received.value
        guard settled.connected, settled.subscribed >= 1 else {
            Output.stderr("beaconbridge \(command): no answer from the broker within \(context.wait) s")
            return ExitCode.unavailable
        }
        // The published version: that of the retained envelope, whoever signed it (numbering only).
        let retained = settled.messages.last { $0.topic == topics.config && !$0.payload.isEmpty }
        let published = retained.flatMap { try? SiteEnvelope.parse($0.payload).get() }?.version ?? 0
        let version = requested ?? published + 1
        let envelope = SiteEnvelope.signed(site: settings.id, version: version, yaml: yaml, key: key)
        let payload = envelope.json
        // The gateways' own checks, against the published version: what they would refuse is not published.
        if case .failure(let refusal) = verifier.verify(Array(payload.utf8), running: published) {
            Output.stderr(
                "beaconbridge \(command): refused, not published: \(refusal.reason.rawValue): \(refusal.message)")
            for problem in refusal.problems { Output.stderr("  " + problem) }
            return ExitCode.dataError
        }
        let before = session.received.value.messages.count
        if case .failure(let failure) = session.client.publish(
            topic: topics.config, payload: payload, qos: 1, retain: true)
        {
            Output.stderr("beaconbridge \(command): cannot publish: \(failure)")
            return ExitCode.unavailable
        }
        session.client.flush()
        // Subscribed to the topic: the broker's copy coming back is the proof it holds this version.
        let deadline = SystemClock.monotonic() + context.wait
        while SystemClock.monotonic() < deadline {
            let messages = session.received.value.messages
            if messages.dropFirst(before).contains(where: {
                $0.topic == topics.config && $0.payload.elementsEqual(payload.utf8)
            }) {
                await Output.line(
                    "published site \(settings.id) version \(version) (sha256 \(envelope.sha256)) on \(topics.config)")
                return ExitCode.ok
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        Output.stderr("beaconbridge \(command): the broker did not confirm version \(version) within \(context.wait) s")
        return ExitCode.unavailable
    }

    // MARK: status

    static func status(_ arguments: [String]) -> Int32 {
        let command = "site status"
        let context: Context
        do { context = try self.context(arguments, command: command, valued: []) } catch { return error.code }
        let topics = context.topics
        return AsyncMain.block {
            switch await RetainedMessages.read(
                context.configuration, password: context.password, filters: [topics.config, topics.statusFilter],
                wait: context.wait, command: command)
            {
            case .failure(let status): return status.code
            case .success(let messages):
                await Output.line(
                    table(messages, topics: topics, site: context.settings.id, now: SystemClock.realtime()))
                return ExitCode.ok
            }
        }
    }

    /// The published version, then one row per gateway: version running, state, hash, the version decided on,
    /// reason and message, and how long ago.
    static func table(_ messages: [InboundMessage], topics: SiteTopics, site: String, now: Double) -> String {
        var published = "site \(site): nothing published on \(topics.config)"
        var statuses: [String: SiteStatus?] = [:]
        for message in messages {
            if message.topic == topics.config {
                if let envelope = try? SiteEnvelope.parse(message.payload).get() {
                    published =
                        "site \(site): published version \(envelope.version) (sha256 \(envelope.sha256.prefix(12)))"
                }
            } else if let gateway = message.topic.split(separator: "/").last.map(String.init) {
                statuses[gateway] = message.payload.isEmpty ? nil : .some(SiteStatus.parse(message.payload))
            }
        }
        var rows = [["gateway", "version", "state", "sha256", "subject", "reason", "age_s", "message"]]
        for gateway in statuses.keys.sorted() {
            guard let status = statuses[gateway] ?? nil else {
                rows.append([gateway, "?", "unreadable", "", "", "", "", ""])
                continue
            }
            rows.append([
                gateway, String(status.version), status.state.rawValue, String(status.sha256.prefix(12)),
                status.subject.map(String.init) ?? "", status.reason ?? "",
                status.time > 0 ? String(Int((now - status.time).rounded())) : "", status.message ?? "",
            ])
        }
        if statuses.isEmpty { return published + "\nno gateway has reported" }
        return published + "\n" + TextTable.render(rows)
    }
}
