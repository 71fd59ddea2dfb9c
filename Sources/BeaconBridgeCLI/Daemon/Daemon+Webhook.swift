import BeaconConfig
import BeaconDelivery
import BeaconEvents
import BeaconRuntime
import SQLiteStore
import WebhookSink

/// The webhook sink beside MQTT (`webhook:`, docs/webhook.md): every event of the kinds it takes is stored in
/// the outbox as it is handed to the publisher (`Daemon.publish`), and the sink's driver delivers the outbox
/// from the webhook's own cursor. Started before the publisher and stopped after it (so a replay's final wait
/// for delivery covers the webhook too).
struct DaemonWebhook {
    let driver: SinkDriver
    let kinds: Set<EventKind>

    /// Sets the outbox's sinks (MQTT alone when there is no webhook, which releases what a removed webhook
    /// held back) and builds the sink; nil without a `webhook` section, an error message when it cannot start.
    static func start(
        configuration: GatewayConfiguration, database: GatewayDatabase, environment: [String: String],
        logger: Logger
    ) async -> Result<DaemonWebhook?, DaemonWebhookError> {
        guard let settings = configuration.webhook else {
            do {
                let released = try await database.setSinks([Outbox.primarySink])
                if released > 0 {
                    logger.notice(
                        "webhook removed: rows only it still held released", metadata: ["rows": "\(released)"])
                }
            } catch {
                return .failure(DaemonWebhookError(message: "cannot set the outbox's sinks: \(error)"))
            }
            return .success(nil)
        }
        let token: String?
        do { token = try WebhookToken.read(for: settings, environment: { environment[$0] }) } catch {
            return .failure(DaemonWebhookError(message: "\(error)"))
        }
        let sink: WebhookSink
        do {
            sink = try WebhookSink(
                settings: settings, token: token, userAgent: "beaconbridge/\(CommandLineTool.version)")
        } catch {
            return .failure(DaemonWebhookError(message: "cannot set up the webhook: \(error)"))
        }
        do { try await database.setSinks([Outbox.primarySink, sink.name]) } catch {
            return .failure(DaemonWebhookError(message: "cannot set the outbox's sinks: \(error)"))
        }
        let webhookLogger = logger.child(label: "webhook")
        let driver = SinkDriver(sink: sink, outbox: database, settings: SinkCursor.Settings(settings)) { notice in
            DaemonWebhook.log(notice, to: webhookLogger)
        }
        webhookLogger.info(
            "webhook on",
            metadata: [
                "url": "\(WebhookSettings.redacted(settings.url))",
                "kinds": "\(settings.kinds.map(\.rawValue).joined(separator: ","))",
                "batch_size": "\(settings.batchSize)",
            ])
        return .success(DaemonWebhook(driver: driver, kinds: Set(settings.kinds)))
    }

    static func log(_ notice: SinkNotice, to logger: Logger) {
        switch notice {
        case let .failed(reason, attempt, retryIn):
            // The first failure and then every doubling: a receiver down for an hour does not fill the journal.
            guard attempt & (attempt - 1) == 0 else { return }
            logger.warning(
                "webhook delivery failed; events kept in the outbox",
                metadata: ["error": "\(reason)", "attempt": "\(attempt)", "retry_in_s": "\(retryIn)"])
        case let .recovered(failures):
            logger.notice("webhook delivery resumed", metadata: ["failed_attempts": "\(failures)"])
        case let .refused(count, sequence, reason):
            logger.error(
                "events refused by the webhook passed over",
                metadata: ["count": "\(count)", "seq": "\(sequence)", "reason": "\(reason)"])
        }
    }

    func logStopped(to logger: Logger) {
        let c = driver.counters
        logger.child(label: "webhook").notice(
            "webhook stopped",
            metadata: [
                "delivered": "\(c.delivered)", "requests": "\(c.attempts)", "failures": "\(c.failures)",
                "refused": "\(c.refused)", "passed_over": "\(c.passedOver)",
            ])
    }
}

struct DaemonWebhookError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
