import BeaconConfig
import BeaconFormats
import DeviceProtocols
import ESPHomeProxy
import GATTLink

#if canImport(Glibc)
import Glibc
import BeaconModel
#endif

/// The ESPHome Bluetooth proxy beside the daemon (`esphome_api`): started before the source, fed with every
/// batch of HCI events by one call in the event path (`esphome?.submit(batch)`), stopped after the loop.
struct DaemonESPHome {
    let server: ESPHomeProxyServer
    let announcement: AvahiPublisher?

    /// nil when `esphome_api.enabled` is false. A configuration problem (a key that does not decode, a
    /// missing file) or a port that cannot be bound is an error: the daemon does not start without it.
    static func start(
        configuration: GatewayConfiguration, environment: [String: String], logger: Logger,
        isReplay: Bool, gattSlots: ConnectionSlots? = nil
    ) async -> Result<DaemonESPHome?, DaemonESPHomeError> {
        let settings = configuration.esphomeAPI
        guard settings.enabled else { return .success(nil) }
        var psk: [UInt8]?
        if let text = secret(
            file: settings.encryptionKeyFile, env: settings.encryptionKeyEnv, environment: environment,
            key: "encryption_key")
        {
            switch text {
            case let .failure(error): return .failure(error)
            case let .success(value):
                guard let key = ESPHomeEncryptionKey.decode(value) else {
                    return .failure(
                        DaemonESPHomeError(
                            message:
                                "esphome_api.encryption_key_\(settings.encryptionKeyFile == nil ? "env" : "file"): "
                                + "not a 32-byte key in base64 (as ESPHome's `api: encryption: key:`; "
                                + "make one with `head -c 32 /dev/urandom | base64`)"))
                }
                psk = key
            }
        }
        var password: String?
        if let text = secret(
            file: settings.passwordFile, env: settings.passwordEnv, environment: environment, key: "password")
        {
            switch text {
            case let .failure(error): return .failure(error)
            case let .success(value):
                var trimmed = value
                while let last = trimmed.last, last == "\n" || last == "\r" { trimmed.removeLast() }
                password = trimmed.isEmpty ? nil : trimmed
            }
        }
        var identity = Self.identity(configuration: configuration, hostname: hostName(), usesPassword: password != nil)
        // Active connections only with the GATT side (its slots, adapter and timeouts).
        let active = Self.activeConnections(configuration: configuration, slots: gattSlots)
        identity.activeConnections = active != nil
        let name = identity.name
        let session = ESPHomeSession.Configuration(identity: identity, password: password, psk: psk)
        var serverConfiguration = ESPHomeProxyServer.Configuration(
            bind: settings.bind, port: settings.port, session: session, allow: settings.allow,
            maxClients: settings.maxClients, clientQueueBytes: settings.clientQueueBytes,
            batchInterval: Double(settings.batchIntervalMilliseconds) / 1000)
        serverConfiguration.activeConnections = active
        let proxyLogger = logger.child(label: "esphome")
        let server = ESPHomeProxyServer(configuration: serverConfiguration) { notice in
            DaemonESPHome.log(notice, to: proxyLogger)
        }
        do { try server.start() } catch {
            return .failure(
                DaemonESPHomeError(
                    message: "esphome_api: cannot listen on \(settings.bind):\(settings.port): \(error)",
                    exitCode: ExitCode.unavailable))
        }
        var announcement: AvahiPublisher?
        if settings.mdns {
            // Logged when avahi confirms it, not when the child starts; failures are retried (AvahiPublisher).
            let publisher = AvahiPublisher(
                name: name, port: server.port,
                txt: MDNSAnnouncement.txtRecords(identity: identity, encrypted: psk != nil),
                environment: environment, counters: server.counters
            ) { notice in
                DaemonESPHome.log(notice, to: proxyLogger)
            }
            publisher.start()
            announcement = publisher
        }
        if isReplay, settings.replayWaitForClients > 0 {
            proxyLogger.notice(
                "waiting for clients before replaying", metadata: ["clients": "\(settings.replayWaitForClients)"])
            for _ in 0..<6000 where server.subscribedClients < settings.replayWaitForClients {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        return .success(DaemonESPHome(server: server, announcement: announcement))
    }

    /// The proxy's active connections: with `esphome_api.active_connections` and `gatt.enabled`, over the
    /// daemon's slot pool, on the scanner's adapter, with `gatt`'s timeouts; nil otherwise (a passive proxy).
    static func activeConnections(configuration: GatewayConfiguration, slots: ConnectionSlots?)
        -> ESPHomeProxyServer.ActiveConnections?
    {
        guard configuration.esphomeAPI.activeConnections, configuration.gatt.enabled, let slots else { return nil }
        var active = ESPHomeProxyServer.ActiveConnections(
            adapter: configuration.scanner.adapterSelector ?? .index(0), slots: slots,
            connectTimeout: configuration.gatt.connectTimeout, requestTimeout: configuration.gatt.requestTimeout,
            limits: ESPHomeConnectionTable.Limits(connectionsPerClient: slots.limit))
        active.allowedDevices = configuration.gatt.allowedDevices
        return active
    }

    /// Who the proxy says it is (DeviceInfo, the mDNS records): the node name (`esphome_api.name`, else from the
    /// host name), the friendly name, the MAC (`esphome_api.mac`, else derived from the node name), the version.
    static func identity(configuration: GatewayConfiguration, hostname: String, usesPassword: Bool)
        -> ESPHomeDeviceIdentity
    {
        let settings = configuration.esphomeAPI
        let name = settings.nodeName(hostname: hostname)
        let mac = settings.macAddress(nodeName: name).description
        return ESPHomeDeviceIdentity(
            name: name, friendlyName: settings.friendlyName ?? configuration.gateway.name, macAddress: mac,
            bluetoothMACAddress: mac, version: CommandLineTool.version, usesPassword: usesPassword,
            suggestedArea: configuration.gateway.room ?? "")
    }

    /// A batch of HCI events (any kind; the server keeps advertising reports).
    func submit(_ batch: [CapturedHCIEvent]) { server.submit(batch) }

    func stop(logger: Logger) async {
        await announcement?.stop()
        await server.stop()
        let c = server.counters.snapshot
        logger.child(label: "esphome").notice(
            "stopped",
            metadata: [
                "connections": "\(c.connections)", "refused": "\(c.refused)", "protocol_errors": "\(c.protocolErrors)",
                "advertisements": "\(c.advertisementsReceived)", "sent": "\(c.advertisementsSent)",
                "dropped": "\(c.advertisementsDropped)", "events_dropped": "\(c.eventsDropped)",
                "gatt_connects": "\(c.gattConnects)", "notifications_dropped": "\(c.notificationsDropped)",
            ])
    }

    /// A secret named by a file or an environment variable; nil when neither is configured.
    private static func secret(
        file: String?, env: String?, environment: [String: String],
        key: String
    ) -> Result<String, DaemonESPHomeError>? {
        if let env {
            guard let value = environment[env] else {
                return .failure(
                    DaemonESPHomeError(message: "esphome_api.\(key)_env: environment variable \(env) is not set"))
            }
            return .success(value)
        }
        guard let file else { return nil }
        guard let text = LocalFiles.read(file, maxBytes: 4096) else {
            return .failure(
                DaemonESPHomeError(
                    message: "esphome_api.\(key)_file: cannot read `\(file)` "
                        + "(missing, unreadable or larger than 4096 bytes)"))
        }
        return .success(text)
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "beaconbridge" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func log(_ notice: MDNSNotice, to logger: Logger) {
        switch notice {
        case let .announced(name):
            logger.info("announced through mDNS", metadata: ["service": "_esphomelib._tcp", "name": "\(name)"])
        case let .failed(reason, attempt, retryIn):
            var metadata: Logger.Metadata = [
                "reason": "\(reason)", "attempt": "\(attempt)", "retry_in_s": "\(retryIn)",
            ]
            if reason.includes("D-Bus") {
                metadata["hint"] = "\(mdnsBusHint)"
            }
            logger.warning("mDNS announcement failed", metadata: metadata)
        case let .unavailable(reason):
            logger.info("not announced through mDNS", metadata: ["reason": "\(reason)"])
        }
    }

    /// Where the child cannot reach avahi-daemon over the system bus (docs/home-assistant.md).
    static let mdnsBusHint =
        "no connection to avahi-daemon over the system bus (under the packaged unit: docs/home-assistant.md); "
        + "install the static file of "
        + "`beaconbridge esphome-mdns` in /etc/avahi/services/ and set esphome_api.mdns: false"

    static func log(_ notice: ESPHomeProxyNotice, to logger: Logger) {
        switch notice {
        case let .listening(address, port, encrypted):
            logger.notice(
                "ESPHome API listening",
                metadata: [
                    "address": "\(address)", "port": "\(port)",
                    "encryption": "\(encrypted ? "noise" : "none")",
                ])
        case let .clientConnected(peer, clients):
            logger.info("client connected", metadata: ["peer": "\(peer)", "clients": "\(clients)"])
        case let .clientRefused(peer, reason):
            logger.warning("client refused", metadata: ["peer": "\(peer)", "reason": "\(reason)"])
        case let .clientClosed(peer, info, reason):
            if let reason {
                logger.warning(
                    "client closed", metadata: ["peer": "\(peer)", "client": "\(info)", "reason": "\(reason)"])
            } else {
                logger.info("client disconnected", metadata: ["peer": "\(peer)", "client": "\(info)"])
            }
        case let .clientSubscribed(peer, info):
            logger.info("client subscribed to advertisements", metadata: ["peer": "\(peer)", "client": "\(info)"])
        case let .clientDropping(peer, dropped):
            logger.warning(
                "client too slow: advertisements dropped for it",
                metadata: [
                    "peer": "\(peer)",
                    "dropped_total": "\(dropped)",
                ])
        case let .failed(message):
            logger.error("ESPHome API failed", metadata: ["error": "\(message)"])
        case let .deviceConnecting(peer, device):
            logger.info("client connecting to a device", metadata: ["peer": "\(peer)", "device": "\(device)"])
        case let .deviceConnected(peer, device, mtu):
            logger.info(
                "device connected for a client", metadata: ["peer": "\(peer)", "device": "\(device)", "mtu": "\(mtu)"])
        case let .deviceRefused(peer, device, reason):
            logger.warning(
                "client's connect refused", metadata: ["peer": "\(peer)", "device": "\(device)", "reason": "\(reason)"])
        case let .deviceDisconnected(peer, device, error):
            logger.info(
                "device connection ended",
                metadata: ["peer": "\(peer)", "device": "\(device)", "error": "\(error)"])
        }
    }
}

struct DaemonESPHomeError: Error, CustomStringConvertible {
    let message: String
    /// 78 for a configuration problem, 69 when the port cannot be bound.
    var exitCode: Int32 = ExitCode.config
    var description: String { message }
}
