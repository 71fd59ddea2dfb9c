import BeaconEvents
import BeaconModel
import BeaconRuntime
import DeviceProtocols
import GATTLink
import MQTTPublisher
import SecureDFU
import Synchronization

/// Firmware updates from the daemon (docs/gatt.md, "Firmware updates over MQTT"): the `dfu` command on
/// `<base>/command/gatt/dfu` and the Home Assistant update entity's `install` on `<base>/command/update/<name>`
/// start the same Secure DFU update (`DeviceFirmwareUpdates`, on a thread of its own) of a configured device with
/// a package. Progress goes out at most every second or 5 % (`DFUProgressThrottle`) on
/// `<base>/reply/gatt/dfu/progress` (QoS 0) and in the entity's retained state on `<base>/device/<name>/update`;
/// the outcome is the reply on `<base>/reply/gatt/dfu`. Nothing of it goes through the outbox.
extension DaemonGATT {
    /// Seconds a progress message or state waits for an unreachable broker before it is dropped.
    static let progressLifetime: Double = 5

    /// Each device with a package: its version as `latest_version` (a package that cannot be read now is logged;
    /// the startup checks refused it already unless it changed since).
    static func initialUpdateStates(_ settings: GATTSettings, logger: Logger) -> [String: DeviceUpdateState] {
        var states: [String: DeviceUpdateState] = [:]
        for device in settings.devices {
            guard let path = device.firmware else { continue }
            var state = DeviceUpdateState()
            do throws(DFUPackageFile.Failure) {
                state.latestVersion = try DFUPackageFile.load(path).firmwareVersion.map { "\($0)" }
            } catch {
                logger.error(
                    "firmware package not usable", metadata: ["device": "\(device.name)", "error": "\(error)"])
            }
            states[device.name] = state
        }
        return states
    }

    /// The update entity states, retained (at the start, so a state left `in_progress` by a stopped gateway ends).
    func publishUpdateStates() {
        for (name, state) in updateStates.withLock({ $0 }) { publishUpdateState(name, state) }
    }

    func changeUpdateState(_ name: String, _ change: (inout DeviceUpdateState) -> Void) {
        let state: DeviceUpdateState? = updateStates.withLock { states in
            guard var state = states[name] else { return nil }
            change(&state)
            states[name] = state
            return state
        }
        if let state { publishUpdateState(name, state) }
    }

    private func publishUpdateState(_ name: String, _ state: DeviceUpdateState) {
        publisher.publishReply(
            ControlMessage(topic: layout.deviceUpdate(name), payload: state.payload, qos: 1, retain: true),
            lifetime: GATTSettings.replyLifetime)
    }

    /// `install` on `<base>/command/update/<name>`: the update entity's button, a `dfu` of the configured package.
    func receiveInstall(_ message: InboundMessage) {
        let prefix = layout.updateCommandBase + "/"
        guard message.topic.hasPrefix(prefix) else { return }
        let name = String(message.topic.dropFirst(prefix.count))
        let replyTopic = layout.gattReply("dfu")
        let id = "install-" + name.prefix(64)
        guard let device = settings.devices.first(where: { TopicLevel.safe($0.name) == name }) else {
            refuse(
                id,
                GATTCommandError(
                    kind: "bad_request", step: "device", message: "no configured device `\(name.prefix(64))`"),
                topic: replyTopic)
            return
        }
        let payload = message.payload.prefix(64).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
        guard payload.elementsEqual("install".utf8) else {
            refuse(
                id, GATTCommandError(kind: "bad_request", step: "payload", message: "the payload must be `install`"),
                topic: replyTopic, address: device.address)
            return
        }
        logger.info("gatt command", metadata: ["op": "install", "id": "\(id)", "address": "\(device.address)"])
        startUpdate(
            GATTCommandRequest(
                operation: .dfu, id: id, address: device.address, random: device.random, device: device.name),
            replyTopic: replyTopic)
    }

    /// Reads and validates the package now (the file may have been replaced), then starts the update; every
    /// refusal is answered at once.
    func startUpdate(_ command: GATTCommandRequest, replyTopic: String) {
        let device = settings.devices.first { $0.address == command.address }
        guard let device, let configured = device.firmware else {
            refuse(
                command.id,
                GATTCommandError(
                    kind: "not_allowed", step: "package",
                    message: "\(command.address): updates are for configured devices with a package "
                        + "(gatt.devices[].firmware)"), topic: replyTopic, address: command.address)
            return
        }
        let path = command.package.map { Self.directory(of: configured) + "/" + $0 } ?? configured
        let package: DFUPackage
        do throws(DFUPackageFile.Failure) {
            package = try DFUPackageFile.load(path)
        } catch {
            let kind: String
            if case .unreadable = error { kind = "package_unreadable" } else { kind = "invalid_package" }
            refuse(
                command.id, GATTCommandError(kind: kind, step: "validatePackage", message: "\(error)"),
                topic: replyTopic, address: command.address)
            return
        }
        let throttle = ProgressGate()
        let request = DeviceFirmwareUpdates.Request(
            address: device.address, random: device.random, package: package, force: command.force)
        let refusal = updates.start(
            request,
            report: { [self] event in
                reportProgress(event, command: command, device: device, throttle: throttle)
            },
            completion: { [self] result in
                finishUpdate(result, command: command, device: device, package: package, replyTopic: replyTopic)
            })
        if let refusal {
            refuse(command.id, refusal, topic: replyTopic, address: command.address)
            return
        }
        logger.notice(
            "firmware update started",
            metadata: [
                "id": "\(command.id)", "device": "\(device.name)", "package": "\(path)",
                "bytes": "\(package.firmware.count)", "version": "\(package.firmwareVersion.map { "\($0)" } ?? "-")",
            ])
        changeUpdateState(device.name) {
            $0.inProgress = true
            $0.percent = 0
        }
    }

    private func reportProgress(
        _ event: SecureDFUSession.Event, command: GATTCommandRequest, device: GATTSettings.Device,
        throttle: ProgressGate
    ) {
        var members: [(String, JSONValue)] = [
            ("id", .string(command.id)), ("op", .string("dfu")), ("device", .string(device.name)),
        ]
        switch event {
        case .progress(let progress):
            guard throttle.admit(progress, at: SystemClock.monotonic()) else { return }
            members += [
                ("event", .string("progress")), ("percent", .int(Int64(progress.percent))),
                ("bytes", .int(Int64(progress.bytes))), ("total", .int(Int64(progress.totalBytes))),
                ("bytes_per_second", progress.bytesPerSecond.map { .int(Int64($0.rounded())) } ?? .null),
            ]
            changeUpdateState(device.name) { $0.percent = progress.percent }
        case .reconnecting(let attempt, let delay, let reason):
            members += [
                ("event", .string("reconnecting")), ("attempt", .int(Int64(attempt))), ("delay", .double(delay)),
                ("reason", .string(reason)),
            ]
            logger.warning(
                "firmware update reconnecting", metadata: ["device": "\(device.name)", "reason": "\(reason)"])
        case .connected, .installedVersion:
            return
        }
        publisher.publishReply(
            ControlMessage(
                topic: layout.dfuProgress, payload: JSONValue.object(members).serialized, qos: 0, retain: false),
            lifetime: Self.progressLifetime)
    }

    private func finishUpdate(
        _ result: Result<DeviceFirmwareUpdates.Finished, GATTCommandError>, command: GATTCommandRequest,
        device: GATTSettings.Device, package: DFUPackage, replyTopic: String
    ) {
        let seconds = { (value: Double) in JSONValue.double((value * 10).rounded() / 10) }
        switch result {
        case .success(let finished):
            var members: [(String, JSONValue)] = [("device", .string(device.name))]
            switch finished.outcome {
            case .completed(let progress):
                members += [
                    ("bytes", .int(Int64(progress.bytes))), ("crc", .string(GATTCommand.hex32(package.firmwareCRC32))),
                    ("seconds", seconds(finished.seconds)),
                ]
                logger.notice(
                    "firmware update complete",
                    metadata: [
                        "id": "\(command.id)", "device": "\(device.name)", "bytes": "\(progress.bytes)",
                        "seconds": "\(seconds(finished.seconds).serialized)",
                    ])
                changeUpdateState(device.name) {
                    if let version = package.firmwareVersion { $0.installedVersion = "\(version)" }
                    $0.inProgress = false
                    $0.percent = nil
                }
            case .upToDate(let version):
                members += [("up_to_date", .bool(true)), ("version", .int(Int64(version)))]
                changeUpdateState(device.name) {
                    $0.inProgress = false
                    $0.percent = nil
                }
            }
            reply(
                GATTCommandReply.success(id: command.id, op: .dfu, address: command.address, members), topic: replyTopic
            )
        case .failure(let error):
            changeUpdateState(device.name) {
                $0.inProgress = false
                $0.percent = nil
            }
            refuse(command.id, error, topic: replyTopic, address: command.address)
        }
    }

    /// The directory part of a path (`.` for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// One update's `DFUProgressThrottle`, shared with the update's thread (which alone calls it; the lock keeps
/// that honest).
final class ProgressGate: Sendable {
    private let throttle = Mutex(DFUProgressThrottle())

    func admit(_ progress: DFUProgress, at now: Double) -> Bool {
        throttle.withLock { $0.admit(progress, at: now) }
    }
}
