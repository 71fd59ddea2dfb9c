import BeaconConfig
import BeaconEvents
import BeaconModel
import BeaconRooms
import BeaconRuntime
import MQTTPublisher

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge rooms train` and `rooms forget` (issue 29; docs/rooms.md, "Training, step by step"): publishes
/// the rooms command to the site's leader (the lowest online gateway of `rooms.gateways`, from the retained
/// availability) or to `--gateway`, and waits for its reply on `<prefix>/<gateway>/reply/rooms/<verb>`.
enum RoomsTrainCommand {
    static let trainHelp = """
        Usage: beaconbridge rooms train --room ROOM --device ID [--seconds S] [--gateway G] [--config FILE]

        Asks a gateway (the site's leader, or --gateway) to record ROOM's fingerprint: walk the room with the
        device (a phone or tag, its beacon id) while this runs. Waits for the end and prints what was heard and
        the room's quality (1.0: enough training; below, walk the room again, at other spots).
        --seconds S  length of the walk, 1-600 (default 60)
        --gateway G  the gateway that records (default: the lowest online gateway of rooms.gateways)
        Exit codes: 0 done, 64 usage, 65 refused by the gateway, 69 broker or gateway unreachable,
        78 invalid configuration.
        """

    static let forgetHelp = """
        Usage: beaconbridge rooms forget --room ROOM [--gateway G] [--config FILE]

        Removes ROOM's fingerprint from every gateway of the site (the retained fingerprint is cleared).
        Exit codes: 0 done, 64 usage, 65 refused by the gateway, 69 broker or gateway unreachable,
        78 invalid configuration.
        """

    static func run(verb: String, _ arguments: [String]) -> Int32 {
        let help = verb == "train" ? trainHelp : forgetHelp
        let name = "rooms " + verb
        let valued = verb == "train" ? ["--room", "--device", "--seconds", "--gateway"] : ["--room", "--gateway"]
        let command: ConfigCommandLine
        switch ConfigCommandLine.parse(
            arguments, command: name, help: help, valued: valued, environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): command = parsed
        case .exit(let code): return code
        }
        guard let room = command.values["--room"] else {
            return ConfigCommandLine.badValue("--room is required", command: name, help: help)
        }
        var members: [(String, JSONValue)] = [("id", .string("cli-\(getpid())-\(Int(SystemClock.realtime()))"))]
        members.append(("room", .string(room)))
        var seconds = RoomCommand.defaultSeconds
        if verb == "train" {
            guard let device = command.values["--device"] else {
                return ConfigCommandLine.badValue("--device is required", command: name, help: help)
            }
            if let text = command.values["--seconds"] {
                guard let value = Double(text), value.isFinite, RoomCommand.secondsRange.contains(value) else {
                    return ConfigCommandLine.badValue("--seconds needs 1-600 seconds", command: name, help: help)
                }
                seconds = value
            }
            members += [("device", .string(device)), ("seconds", .double(seconds))]
        }
        let configuration: GatewayConfiguration
        switch command.location.load(command: name, hostEnvironment: nil) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        let password: String?
        do { password = try RetainedMessages.password(configuration, command: name) } catch { return error.code }
        let request = JSONValue.object(members)
        let wait = verb == "train" ? seconds + 30 : 15
        return AsyncMain.block {
            await exchange(
                verb: verb, request: request, configuration: configuration, password: password,
                gateway: command.values["--gateway"], wait: wait)
        }
    }

    /// Connects, finds the gateway, publishes the command and waits (at most `wait` s after publishing) for the
    /// reply that ends it.
    static func exchange(
        verb: String, request: JSONValue, configuration: GatewayConfiguration, password: String?, gateway: String?,
        wait: Double
    ) async -> Int32 {
        let name = "rooms " + verb
        let prefix = configuration.topics.prefix
        let topics = RoomTopics(prefix: prefix)
        let replies = prefix + "/+/reply/rooms/+"
        let session: RetainedMessages.Session
        switch RetainedMessages.Session.start(
            configuration, password: password, clientPrefix: "beaconbridge-rooms", command: name)
        {
        case .success(let started): session = started
        case .failure(let status): return status.code
        }
        let client = session.client
        // Connected and subscribed, the retained availability read (a short grace after the acknowledgements).
        if let outcome = await session.settle(filters: [topics.availabilityFilter, replies], wait: 10, command: name) {
            await client.stop()
            return outcome
        }
        let settled = session.received.value
        guard settled.connected && settled.subscribed >= 2 else {
            Output.stderr("beaconbridge \(name): no answer from the broker within 10 s")
            await client.stop()
            return ExitCode.unavailable
        }
        var online: Set<String> = []
        for message in settled.messages {
            if case let .availability(id) = topics.parse(message.topic) {
                if message.payload.elementsEqual("online".utf8) { online.insert(id) } else { online.remove(id) }
            }
        }
        let site = Set(configuration.rooms.gatewayRooms(own: configuration.gateway).keys)
        guard let target = gateway ?? online.intersection(site).min() else {
            Output.stderr(
                "beaconbridge \(name): no gateway of rooms.gateways is online (\(site.sorted().joined(separator: ", "))); name one with --gateway"
            )
            await client.stop()
            return ExitCode.unavailable
        }
        let layout = TopicLayout(settings: configuration.topics, gatewayID: target)
        let id = request["id"]?.stringValue ?? ""
        if case .failure(let failure) = client.publish(
            topic: layout.roomsCommandBase + "/" + verb, payload: request.serialized, qos: 1, retain: false)
        {
            Output.stderr("beaconbridge \(name): cannot publish the command: \(failure)")
            await client.stop()
            return ExitCode.unavailable
        }
        client.flush()
        let replyTopic = layout.roomsReply(verb)
        let deadline = SystemClock.monotonic() + wait
        var seen = 0
        while SystemClock.monotonic() < deadline {
            let messages = session.received.value.messages
            while seen < messages.count {
                let message = messages[seen]
                seen += 1
                guard message.topic == replyTopic,
                    let json = try? JSONValue(parsing: String(decoding: message.payload, as: UTF8.self), maxDepth: 8),
                    json["id"]?.stringValue == id
                else { continue }
                if json["ok"] != .bool(true) {
                    let error = json["error"]
                    Output.stderr(
                        "beaconbridge \(name): \(target) refused: \(error?["kind"]?.stringValue ?? "?") (\(error?["step"]?.stringValue ?? "?")): \(error?["message"]?.stringValue ?? "")"
                    )
                    await client.stop()
                    return ExitCode.dataError
                }
                if verb == "forget" {
                    let had = json["forgotten"] == .bool(true)
                    await Output.line(
                        "\(target): \(json["room"]?.stringValue ?? "?") forgotten"
                            + (had ? "" : " (it had no fingerprint there)"))
                    await client.stop()
                    return ExitCode.ok
                }
                if json["state"] == .string("started") {
                    await Output.line(
                        "\(target): training \(json["room"]?.stringValue ?? "?") with \(json["device"]?.stringValue ?? "?") for \(number(json["seconds"])) s: walk the room now"
                    )
                    continue
                }
                await Output.line(
                    "\(target): done: \(number(json["reports"])) reports from \(number(json["gateways_heard"])) gateway(s); \(json["room"]?.stringValue ?? "?"): \(number(json["walks"])) walk(s), \(decimal(json["room_seconds"])) s, quality \(decimal(json["quality"]))"
                )
                await client.stop()
                return ExitCode.ok
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        Output.stderr(
            "beaconbridge \(name): no reply from \(target) within \(Int(wait)) s (is it running with rooms.enabled?)")
        await client.stop()
        return ExitCode.unavailable
    }

    /// A JSON number as a decimal (`1.0`, `0.667`), whether it was written as an integer or not.
    static func decimal(_ value: JSONValue?) -> String {
        switch value {
        case let .int(v)?: String(Double(v))
        case let .double(v)?: String(v)
        default: "?"
        }
    }

    static func number(_ value: JSONValue?) -> String {
        switch value {
        case let .int(v)?: String(v)
        case let .double(v)?: String(v)
        default: "?"
        }
    }
}

extension JSONValue {
    fileprivate var stringValue: String? { if case let .string(text) = self { text } else { nil } }
}
