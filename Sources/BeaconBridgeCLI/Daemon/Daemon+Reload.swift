import BeaconConfig
import BeaconFormats
import BeaconRuntime
import YAMLConfig

extension Daemon {
    /// SIGHUP: re-reads the file and applies formats, regions, tracking, known beacons and the `rooms:` section
    /// without losing tracker, region or room state. A file with problems is refused as a whole and the running configuration kept.
    func reload() async {
        notifySystemd(.reloading)
        defer { notifySystemd(.ready) }
        var loaded: GatewayConfiguration
        // Reading and parsing the file blocks: on a thread of its own, so the loop's pool thread is free meanwhile.
        let path = options.config.path
        let result =
            (try? await DedicatedThread.run(name: "bb-config") { ConfigurationLoader.load(path: path) })
            ?? ConfigurationLoader.load(path: path)
        switch result {
        case let .success(configuration): loaded = configuration
        case let .failure(errors):
            logger.error(
                "reload refused: the configuration has problems; keeping the running one",
                metadata: ["problems": "\(errors.issues.count)"])
            for line in errors.lines { logger.error(line) }
            return
        }
        // With a site configuration running, the local file joins it (Daemon+Site).
        switch siteMerged(loaded) {
        case .success(let merged): loaded = merged
        case .failure(let refusal):
            logger.error("reload refused: the running site configuration does not validate with the local file")
            for line in [refusal.message] + refusal.problems { logger.error(line) }
            return
        }
        await apply(loaded)
    }

    /// Applies what a reload applies (formats, distance, tracking, regions, beacons, devices, telemetry, rooms)
    /// without losing tracker, region or room state: SIGHUP's and a site configuration's path (Daemon+Site).
    /// False (and nothing applied) when the formats cannot be built.
    @discardableResult
    func apply(_ loaded: GatewayConfiguration) async -> Bool {
        let decoder: BeaconDecoder
        do { decoder = try BeaconDecoder(settings: loaded.formats) } catch {
            logger.error("reload refused: \(error)")
            return false
        }
        let events = pipeline.reload(
            decoder: decoder, includeDevices: loaded.formats.includeDevices,
            regions: loaded.regions, settings: loaded.tracking, now: clock)
        let unchanged = [
            loaded.mqtt != configuration.mqtt ? "mqtt" : nil, loaded.topics != configuration.topics ? "topics" : nil,
            loaded.outbox != configuration.outbox ? "outbox" : nil,
            loaded.scanner != configuration.scanner ? "scanner" : nil,
            loaded.gateway != configuration.gateway ? "gateway" : nil,
            loaded.rooms.enabled != configuration.rooms.enabled ? "rooms.enabled" : nil,
            loaded.rooms.topics(prefix: loaded.topics.prefix, own: loaded.gateway)
                != configuration.rooms.topics(prefix: configuration.topics.prefix, own: configuration.gateway)
                ? "rooms.zones" : nil,
        ].compactMap { $0 }
        if !unchanged.isEmpty {
            logger.warning(
                "these sections changed but apply only after a restart",
                metadata: ["sections": "\(unchanged.joined(separator: ","))"])
        }
        configuration.formats = loaded.formats
        configuration.distance = loaded.distance
        configuration.tracking = loaded.tracking
        configuration.regions = loaded.regions
        configuration.beacons = loaded.beacons
        configuration.devices = loaded.devices
        pipeline.reload(devices: loaded.devices)
        configuration.telemetry = loaded.telemetry
        await reloadRooms(loaded)
        logger.notice(
            "configuration reloaded",
            metadata: [
                "regions": "\(loaded.regions.count)", "layouts": "\(loaded.formats.layouts.count)",
                "tracked": "\(pipeline.engine.trackedCount)",
            ])
        await publish(events)
        publishDiscovery()
        return true
    }
}
