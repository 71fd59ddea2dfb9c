import BeaconEvents
import BeaconRuntime
import BeaconTracking

/// `beaconbridge devices status [--config FILE] [--wait S]`: reads every gateway's retained presence from the
/// configured broker and prints, per beacon and gateway, its state and what that gateway learned of its timing
/// (docs/tracking-and-regions.md, "Away that fits the device").
enum DevicesCommand {
    static let help = """
        Usage: beaconbridge devices status [--config FILE] [--wait S]

        Connects to the configured broker, reads the retained presence of every gateway under the topic prefix
        and prints one line per beacon and gateway: its configured (or advertised) name, state (seen, stale, away), the interval the gateway
        learned (median gap between reports, s), the silence after which it turns away (s), and how long ago the
        presence event was (s, capture time against this machine's clock). Then what was taught (`regions
        teach`): per region, device and gateway the levels its regions decide by, or that they decide by the
        configured numbers.
        --wait S     wait at most S seconds for the broker and the retained messages (default 5)
        Exit codes: 0 ok, 64 usage, 69 broker unreachable, 78 invalid configuration.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let request: RetainedMessages.StatusRequest
        do { request = try RetainedMessages.statusRequest(arguments, group: "devices", help: help) } catch {
            return error.code
        }
        let configuration = request.configuration
        return AsyncMain.block {
            var report = DevicesStatus(
                prefix: configuration.topics.prefix, names: DevicesStatus.names(of: configuration))
            let prefix = configuration.topics.prefix
            switch await RetainedMessages.read(
                configuration, password: request.password,
                filters: [report.filter] + TaughtRecord.filters(prefix: prefix), wait: request.wait,
                command: "devices status")
            {
            case let .success(messages):
                // The taught records (issue 43) after the presence: what each device's regions decide by.
                let taught = messages.filter { $0.topic.hasPrefix(prefix + "/regions/") }
                for message in messages where !message.topic.hasPrefix(prefix + "/regions/") { report.take(message) }
                await Output.line(report.table(now: SystemClock.realtime()))
                await Output.line(
                    TaughtStatus.table(
                        messages: taught, site: prefix, regions: Set(configuration.regions.map(\.name))))
                return ExitCode.ok
            case let .failure(status):
                return status.code
            }
        }
    }
}
