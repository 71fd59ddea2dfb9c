import BeaconConfig
import BeaconEvents
import BeaconModel
import BeaconRuntime
import BeaconTracking
import MQTTPublisher

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge regions teach | forget | status` (issue 43; docs/teach.md): publishes a regions command on the
/// site's `<prefix>/regions/command/<verb>`, which every gateway reads, and prints each online gateway's
/// replies (`<prefix>/<gateway>/reply/regions/<verb>`: progress while it records, then what it heard and the
/// teach's quality); `status` prints the retained taught records.
enum RegionsCommand {
    static let help = """
        Usage: beaconbridge regions teach --region R --device ID --at boundary|inside [--seconds S] [--config FILE]
               beaconbridge regions teach --device ID --at 1m [--seconds S] [--config FILE]
               beaconbridge regions forget (--region R | --reference) --device ID [--config FILE]
               beaconbridge regions status [--config FILE] [--wait S]

        teach: hold the device (its beacon id) where --at says while this runs: at the region's boundary, at a
        typical spot inside it, or 1 m from a gateway (its reference power for distances). Every gateway of the
        site that has the region records the device's reports for S seconds (1-120, default 30) and sets the
        region's enter and exit levels for that device from them. Prints each gateway's progress and, at the
        end, the level it heard and what more the teach needs.
        forget: removes what was taught for the region (or, with --reference, the 1 m level) and the device,
        on every gateway; the configured levels apply again.
        status: what is taught, per region, device and gateway (the retained records).
        Exit codes: 0 done, 64 usage, 65 refused or nothing stored (the device not heard), 69 broker or gateways
        unreachable, 78 invalid configuration.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let verb = arguments.first, ["teach", "forget", "status"].contains(verb) else {
            Output.stderr("beaconbridge regions: teach, forget or status\n\n\(help)")
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        if verb == "status" { return status(arguments) }
        let name = "regions " + verb
        let valued = verb == "teach" ? ["--region", "--device", "--at", "--seconds"] : ["--region", "--device"]
        let command: ConfigCommandLine
        switch ConfigCommandLine.parse(
            rest, command: name, help: help, flags: verb == "forget" ? ["--reference"] : [], valued: valued,
            environment: ProcessEnvironment.current())
        {
        case .parsed(let parsed): command = parsed
        case .exit(let code): return code
        }
        guard let device = command.values["--device"], !device.isEmpty else {
            return ConfigCommandLine.badValue("--device is required", command: name, help: help)
        }
        var members: [(String, JSONValue)] = [("id", .string("cli-\(getpid())-\(Int(SystemClock.realtime()))"))]
        var seconds = TeachCommand.defaultSeconds
        let region = command.values["--region"]
        if verb == "teach" {
            guard let at = command.values["--at"], let spot = TeachSpot(rawValue: at) else {
                return ConfigCommandLine.badValue("--at must be boundary, inside or 1m", command: name, help: help)
            }
            if spot != .oneMetre, region == nil {
                return ConfigCommandLine.badValue("--region is required unless --at 1m", command: name, help: help)
            }
            if let text = command.values["--seconds"] {
                guard let value = Double(text), value.isFinite, TeachCommand.secondsRange.contains(value) else {
                    return ConfigCommandLine.badValue("--seconds needs 1-120 seconds", command: name, help: help)
                }
                seconds = value
            }
            if spot != .oneMetre, let region { members.append(("region", .string(region))) }
            members += [("device", .string(device)), ("at", .string(at)), ("seconds", .double(seconds))]
        } else {
            let reference = command.flags.contains("--reference")
            guard (region == nil) == reference else {
                return ConfigCommandLine.badValue("forget needs --region R or --reference", command: name, help: help)
            }
            if let region { members.append(("region", .string(region))) }
            members.append(("device", .string(device)))
        }
        let configuration: GatewayConfiguration
        switch command.location.load(command: name, hostEnvironment: nil) {
        case .loaded(let loaded): configuration = loaded
        case .failed(let exitCode): return exitCode
        }
        if let region, !configuration.regions.contains(where: { $0.name == region }) {
            Output.stderr(
                "beaconbridge \(name): `\(region)` is not a region of the configuration (\(configuration.regions.map(\.name).sorted().joined(separator: ", ")))"
            )
            return ExitCode.dataError
        }
        let password: String?
        do { password = try RetainedMessages.password(configuration, command: name) } catch { return error.code }
        let request = JSONValue.object(members)
        let wait = verb == "teach" ? seconds + 30 : 15
        return AsyncMain.block {
            await exchange(
                verb: verb, request: request, configuration: configuration, password: password, wait: wait)
        }
    }

    /// Connects, reads which gateways are online, publishes the command and prints every online gateway's
    /// replies until each has answered with its last (or `wait` seconds after publishing).
    static func exchange(
        verb: String, request: JSONValue, configuration: GatewayConfiguration, password: String?, wait: Double
    ) async -> Int32 {
        let name = "regions " + verb
        let prefix = configuration.topics.prefix
        let availability = prefix + "/+/availability"
        let replies = prefix + "/+/reply/regions/+"
        let session: RetainedMessages.Session
        switch RetainedMessages.Session.start(
            configuration, password: password, clientPrefix: "beaconbridge-regions", command: name)
        {
        case .success(let started): session = started
        case .failure(let status): return status.code
        }
        let client = session.client
        if let outcome = await session.settle(filters: [availability, replies], wait: 10, command: name) {
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
            guard let gateway = level(message.topic, prefix: prefix, suffix: "/availability") else { continue }
            if message.payload.elementsEqual("online".utf8) { online.insert(gateway) } else { online.remove(gateway) }
        }
        guard !online.isEmpty else {
            Output.stderr("beaconbridge \(name): no gateway of `\(prefix)` is online")
            await client.stop()
            return ExitCode.unavailable
        }
        let id = request["id"]?.text ?? ""
        if case .failure(let failure) = client.publish(
            topic: DaemonTeaching.commandBase(prefix: prefix) + "/" + verb, payload: request.serialized, qos: 1,
            retain: false)
        {
            Output.stderr("beaconbridge \(name): cannot publish the command: \(failure)")
            await client.stop()
            return ExitCode.unavailable
        }
        client.flush()
        let deadline = SystemClock.monotonic() + wait
        var seen = settled.messages.count
        var finished: [String: Bool] = [:]  // gateway: stored / forgotten
        while SystemClock.monotonic() < deadline, !online.isSubset(of: Set(finished.keys)) {
            let messages = session.received.value.messages
            while seen < messages.count {
                let message = messages[seen]
                seen += 1
                guard let gateway = level(message.topic, prefix: prefix, suffix: "/reply/regions/" + verb),
                    let json = try? JSONValue(parsing: String(decoding: message.payload, as: UTF8.self), maxDepth: 8),
                    json["id"]?.text == id
                else { continue }
                online.insert(gateway)
                if json["ok"] != .bool(true) {
                    let error = json["error"]
                    Output.stderr(
                        "\(gateway): refused: \(error?["kind"]?.text ?? "?") (\(error?["step"]?.text ?? "?")): \(error?["message"]?.text ?? "")"
                    )
                    finished[gateway] = false
                    continue
                }
                if verb == "forget" {
                    await Output.line("\(gateway): forgotten (\(number(json["forgotten"])) record(s))")
                    finished[gateway] = true
                    continue
                }
                await Output.line(describe(json, gateway: gateway))
                if json["state"] == .string("done") { finished[gateway] = json["stored"] == .bool(true) }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        await client.stop()
        let silent = online.subtracting(finished.keys).sorted()
        if !silent.isEmpty {
            Output.stderr(
                "beaconbridge \(name): no final reply within \(Int(wait)) s from \(silent.joined(separator: ", "))")
        }
        if finished.values.contains(true) { return ExitCode.ok }
        return finished.isEmpty ? ExitCode.unavailable : ExitCode.dataError
    }

    /// One teach reply as a line.
    static func describe(_ json: JSONValue, gateway: String) -> String {
        let what = json["region"]?.text.map { "\($0) at \(json["at"]?.text ?? "?")" } ?? "1 m level"
        switch json["state"]?.text {
        case "started":
            return
                "\(gateway): recording \(what) of \(json["device"]?.text ?? "?") for \(number(json["seconds"])) s: hold the device there now"
        case "recording":
            return "\(gateway): \(number(json["seconds_left"])) s left, \(number(json["reports"])) reports heard"
        default:
            var line = "\(gateway): done: "
            if let level = json["level"], level != .null {
                line +=
                    "level \(number(level["level"])) dBm, spread \(number(level["spread"])) dB, \(number(level["reports"])) reports"
            } else {
                line += "the device was not heard"
            }
            if let levels = json["levels"] {
                line += "; enter \(number(levels["enter"])) dBm, exit \(number(levels["exit"])) dBm"
            }
            if let power = json["reference_power"] { line += "; reference power \(number(power)) dBm" }
            line += json["stored"] == .bool(true) ? "; stored" : "; nothing stored"
            if case let .array(needs)? = json["needs"], !needs.isEmpty {
                line += "\n  needs: " + needs.compactMap(\.text).joined(separator: "\n  needs: ")
            } else {
                line += "; quality good"
            }
            return line
        }
    }

    /// The gateway level of `<prefix>/<gateway><suffix>`, nil for any other topic.
    static func level(_ topic: String, prefix: String, suffix: String) -> String? {
        guard topic.hasPrefix(prefix + "/"), topic.hasSuffix(suffix) else { return nil }
        let middle = topic.dropFirst(prefix.count + 1).dropLast(suffix.count)
        return middle.isEmpty || middle.contains("/") ? nil : String(middle)
    }

    static func number(_ value: JSONValue?) -> String {
        switch value {
        case let .int(v)?: String(v)
        case let .double(v)?: v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        default: "?"
        }
    }

    /// `regions status`: the retained taught records, one line each.
    static func status(_ arguments: [String]) -> Int32 {
        let request: RetainedMessages.StatusRequest
        do { request = try RetainedMessages.statusRequest(arguments, group: "regions", help: help) } catch {
            return error.code
        }
        let configuration = request.configuration
        return AsyncMain.block {
            let messages: [InboundMessage]
            switch await RetainedMessages.read(
                configuration, password: request.password,
                filters: TaughtRecord.filters(prefix: configuration.topics.prefix), wait: request.wait,
                command: "regions status")
            {
            case let .success(received): messages = received
            case let .failure(status): return status.code
            }
            await Output.line(
                TaughtStatus.table(
                    messages: messages, site: configuration.topics.prefix,
                    regions: Set(configuration.regions.map(\.name))))
            return ExitCode.ok
        }
    }
}

/// The taught records as a table (`regions status`, `devices status`): region, device, gateway, boundary and
/// inside levels, the enter/exit levels they set, or the 1 m level, and a note when the gateway moved since;
/// records refused are listed with why.
enum TaughtStatus {
    static func table(messages: [InboundMessage], site: String, regions: Set<String>) -> String {
        var book = TaughtBook(site: site)
        var refused: [String] = []
        for message in messages where !message.payload.isEmpty {
            switch TaughtRecord.parse(message.payload, site: site, regions: regions, topic: message.topic) {
            case let .success(record): book.put(record)
            case let .failure(failure): refused.append("refused \(message.topic): \(failure.message)")
            }
        }
        guard !book.records.isEmpty || !refused.isEmpty else {
            return "taught: nothing (every region decides by its configured levels)"
        }
        var rows: [[String]] = [["REGION", "DEVICE", "GATEWAY", "BOUNDARY", "INSIDE", "ENTER/EXIT", "1M", "NOTE"]]
        func dbm(_ level: TaughtLevel?) -> String {
            level.map {
                "\(RegionsCommand.number(.double(($0.level * 10).rounded() / 10)))±\(RegionsCommand.number(.double(($0.spread * 10).rounded() / 10)))"
            } ?? "-"
        }
        for record in book.sorted {
            let levels = record.link?.levels.map {
                "\(RegionsCommand.number(.double(($0.enter * 10).rounded() / 10)))/\(RegionsCommand.number(.double(($0.exit * 10).rounded() / 10)))"
            }
            rows.append([
                record.region ?? "-", record.device, record.gateway, dbm(record.levels[.boundary]),
                dbm(record.levels[.inside]), levels ?? "-", dbm(record.levels[.oneMetre]),
                record.moved.map {
                    "MOVED: teach again (peers \(RegionsCommand.number(.double(($0.shift * 10).rounded() / 10))) dB off)"
                } ?? "-",
            ])
        }
        return "taught:\n" + TextTable.render(rows) + (refused.isEmpty ? "" : "\n" + refused.joined(separator: "\n"))
    }
}

extension JSONValue {
    fileprivate var text: String? { if case let .string(value) = self { value } else { nil } }
}
