import BeaconConfig
import BeaconEvents
import BeaconModel
import BeaconRuntime
import DeviceProtocols
import GATTLink
import MQTTPublisher
import Synchronization

/// GATT through the gateway (`gatt.enabled`, docs/gatt.md): commands on `<base>/command/gatt/<op>` answered on
/// `<base>/reply/gatt/<op>`, and the device information of `gatt.devices` read on a schedule and published on
/// `<base>/device/<name>/info` (retained) for Home Assistant's sensors. Connections run on the workers' threads
/// (`GATTCommandWorkers`), never on the loop; replies go out through the publisher as command replies (not in
/// the outbox; dropped when the broker stays unreachable for `GATTSettings.replyLifetime` seconds). Firmware
/// updates (`dfu`, the update entity's `install`) run on threads of their own (Daemon+GATTUpdate).
final class DaemonGATT: Sendable {
    let settings: GATTSettings
    let layout: TopicLayout
    let workers: GATTCommandWorkers
    let updates: DeviceFirmwareUpdates
    let publisher: EventPublisher
    let logger: Logger
    /// The update entity state of each device with a package (`gatt.devices[].firmware`), by name.
    let updateStates: Mutex<[String: DeviceUpdateState]>

    /// `slots`: the daemon's pool, shared with the ESPHome proxy's active connections (a pool of its own when nil).
    init?(
        configuration: GatewayConfiguration, layout: TopicLayout, publisher: EventPublisher, logger: Logger,
        slots: ConnectionSlots? = nil
    ) {
        let settings = configuration.gatt
        guard settings.enabled else { return nil }
        self.settings = settings
        self.layout = layout
        self.publisher = publisher
        self.logger = logger
        let executor = GATTCommandExecutor(
            adapter: configuration.scanner.adapterSelector ?? .index(0),
            slots: slots ?? ConnectionSlots(limit: settings.slots),
            connectTimeout: settings.connectTimeout, requestTimeout: settings.requestTimeout)
        workers = GATTCommandWorkers(workers: settings.slots, maxPending: GATTSettings.maxPendingCommands) {
            executor.execute($0)
        }
        updates = DeviceFirmwareUpdates(executor: executor, limit: settings.slots)
        updateStates = Mutex(Self.initialUpdateStates(settings, logger: logger))
        publishUpdateStates()
    }

    /// Handles one inbound command message: parses it, answers a bad one at once, queues a good one.
    func receive(_ message: InboundMessage) {
        guard let op = GATTCommandRequest.operation(inTopic: message.topic, commandBase: layout.gattCommandBase)
        else { return }
        let replyTopic = layout.gattReply(GATTCommandReply.level(for: op))
        switch GATTCommandRequest.parse(op: op, payload: message.payload, devices: settings.devices) {
        case .failure(let failure):
            refuse(failure.id, failure.error, topic: replyTopic)
        case .success(let command):
            guard settings.allows(command.address) else {
                refuse(
                    command.id,
                    GATTCommandError(
                        kind: "not_allowed", step: "address",
                        message: "\(command.address) is not in gatt.allowed_devices"), topic: replyTopic)
                return
            }
            logger.info(
                "gatt command",
                metadata: [
                    "op": "\(command.operation.rawValue)", "id": "\(command.id)", "address": "\(command.address)",
                ])
            if command.operation == .dfu {
                startUpdate(command, replyTopic: replyTopic)
                return
            }
            workers.submit(command) { [self] result in
                switch result {
                case .success(let members):
                    logger.info(
                        "gatt command done", metadata: ["op": "\(command.operation.rawValue)", "id": "\(command.id)"])
                    reply(
                        GATTCommandReply.success(
                            id: command.id, op: command.operation, address: command.address, members), topic: replyTopic
                    )
                    if command.operation == .info,
                        let device = settings.devices.first(where: { $0.address == command.address })
                    {
                        publishInfo(device, members)
                    }
                case .failure(let error):
                    refuse(command.id, error, topic: replyTopic, address: command.address)
                }
            }
        }
    }

    func refuse(_ id: String?, _ error: GATTCommandError, topic: String, address: BluetoothAddress? = nil) {
        logger.warning(
            "gatt command failed",
            metadata: [
                "id": "\(id ?? "-")", "kind": "\(error.kind)", "step": "\(error.step)",
                "address": "\(address?.description ?? "-")", "error": "\(error.message)",
            ])
        reply(GATTCommandReply.failure(id: id, error), topic: topic)
    }

    func reply(_ payload: String, topic: String) {
        publisher.publishReply(
            ControlMessage(topic: topic, payload: payload, qos: 1, retain: false), lifetime: GATTSettings.replyLifetime)
    }

    /// Reads a configured device's information now (its schedule came due).
    func readInformation(_ device: GATTSettings.Device) {
        let command = GATTCommandRequest(
            operation: .info, id: "schedule", address: device.address, random: device.random)
        workers.submit(command) { [self] result in
            switch result {
            case .success(let members):
                let wanted = Set(device.read.map(\.rawValue))
                publishInfo(device, members.filter { wanted.contains($0.0) })
            case .failure(let error):
                logger.warning(
                    "device information not read",
                    metadata: [
                        "device": "\(device.name)", "address": "\(device.address)", "kind": "\(error.kind)",
                        "error": "\(error.message)",
                    ])
            }
        }
    }

    /// `{"name", "address", "time", "firmware", "hardware", "battery"}` (those read), retained.
    private func publishInfo(_ device: GATTSettings.Device, _ members: [(String, JSONValue)]) {
        let payload = JSONValue.object(
            [
                ("name", .string(device.name)), ("address", .string(device.address.description)),
                ("time", .double((SystemClock.realtime() * 1000).rounded() / 1000)),
            ] + members.filter { ["firmware", "hardware", "battery"].contains($0.0) }
        ).serialized
        logger.info("device information", metadata: ["device": "\(device.name)", "info": "\(payload)"])
        publisher.publishReply(
            ControlMessage(topic: layout.deviceInfo(device.name), payload: payload, qos: 1, retain: true),
            lifetime: device.interval)
        if device.firmware != nil, case .string(let firmware)? = members.first(where: { $0.0 == "firmware" })?.1 {
            changeUpdateState(device.name) { $0.installedVersion = firmware }
        }
    }
}

/// When each configured device's information is read next (monotonic seconds); the loop's to own.
struct GATTInfoSchedule {
    var due: [Double]

    /// The first reads 10 s after the start, 2 s apart.
    init(devices: [GATTSettings.Device], start: Double) {
        due = devices.indices.map { start + 10 + 2 * Double($0) }
    }

    /// The devices due at `now`, each rescheduled one interval later.
    mutating func take(_ devices: [GATTSettings.Device], now: Double) -> [GATTSettings.Device] {
        var out: [GATTSettings.Device] = []
        for index in devices.indices where index < due.count && due[index] <= now {
            due[index] = now + devices[index].interval
            out.append(devices[index])
        }
        return out
    }
}

extension Daemon {
    /// Subscribes to the command topics; a service (nil when `gatt` is off) that hands each command to
    /// `DaemonGATT.receive` (parsing on this task, connections on the workers) and stops the workers at the end.
    func gattCommandService() -> TaskService? {
        guard let gatt else { return nil }
        let stream = publisher.subscribe(gatt.layout.gattCommandBase + "/+", qos: 1)
        logger.notice(
            "gatt commands on",
            metadata: ["topic": "\(gatt.layout.gattCommandBase)/+", "slots": "\(gatt.settings.slots)"])
        let installs = publisher.subscribe(gatt.layout.updateCommandBase + "/+", qos: 1)
        return TaskService("gatt") {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await message in stream { gatt.receive(message) } }
                group.addTask { for await message in installs { gatt.receiveInstall(message) } }
            }
            gatt.workers.stop()
            gatt.updates.stop()
        }
    }

    /// On the loop's tick (live only: a replay has no adapter to connect with): the devices whose information
    /// is due.
    func readDueInformation() {
        guard let gatt, !isReplay else { return }
        for device in gattSchedule.take(gatt.settings.devices, now: SystemClock.monotonic()) {
            gatt.readInformation(device)
        }
    }

    /// Home Assistant sensors of `gatt.devices` (with `gatt.enabled`).
    func gattDiscovery(_ discovery: HomeAssistantDiscovery) -> [ControlMessage] {
        guard let gatt else { return [] }
        return gatt.settings.devices.flatMap(discovery.deviceInfoMessages)
    }
}
