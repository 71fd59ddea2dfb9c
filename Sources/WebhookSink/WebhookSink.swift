import BeaconDelivery
import CCurl
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// The webhook sink (docs/webhook.md): POSTs a batch of events as one JSON array to `webhook.url` through
/// libcurl, loaded when the first sink is made (`beaconbridge_curl_load`: a gateway without a webhook never maps
/// it; without libcurl installed the sink cannot start and says so) (TLS through the system's OpenSSL, `webhook.ca_file` optional), one request at a time, on its own
/// serial queue (a blocking `curl_easy_perform` never runs on the cooperative pool). The connection is kept
/// alive between requests.
///
/// Outcomes: 2xx acknowledged; 400, 413, 415 and 422 refused (the events themselves are unacceptable: passed
/// over and reported); anything else (no connection, timeout, TLS failure, 3xx, 401, 403, 404, 408, 429, 5xx)
/// failed, offered again after a backoff, so a wrong token or path loses nothing once it is fixed.
///
/// `@unchecked Sendable`: the invariant is that `handle` and `errorBuffer` are only touched by blocks running
/// on `queue` (and by `deinit`, when nothing else can).
public final class WebhookSink: EventSink, @unchecked Sendable {
    public let name = "webhook"
    let settings: WebhookSettings
    /// Request headers, the token's included (never logged).
    private let headers: [String]
    private let queue = DispatchQueue(label: "beaconbridge.webhook")
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Statuses that mean the events themselves will never be accepted.
    static let refusingStatuses: Set<Int> = [400, 413, 415, 422]

    /// - Parameter token: sent as `Authorization: Bearer <token>` (`WebhookToken.read`).
    public init(settings: WebhookSettings, token: String?, userAgent: String) throws(WebhookError) {
        if let failure = beaconbridge_curl_load() {
            throw WebhookError(operation: "load libcurl", message: String(cString: failure))
        }
        guard let handle = beaconbridge_curl_easy_init() else {
            throw WebhookError(operation: "curl_easy_init", message: "libcurl could not create a handle")
        }
        self.settings = settings
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var lines = ["Content-Type: application/json", "User-Agent: \(userAgent)", "Expect:"]
        lines += settings.headers.map { "\($0.name): \($0.value)" }
        if let token, !token.isEmpty { lines.append("Authorization: Bearer \(token)") }
        headers = lines
    }

    deinit {
        beaconbridge_curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// The request body: the events' JSON payloads, byte for byte as on MQTT, as one array in sequence order.
    public static func body(_ messages: [SinkMessage]) -> String {
        "[" + messages.map(\.payload).joined(separator: ",") + "]"
    }

    public func publish(_ messages: [SinkMessage]) async -> SinkOutcome {
        let body = WebhookSink.body(messages)
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.post(body)) }
        }
    }

    /// On `queue`: one POST (the corresponding C function is `curl_easy_perform`).
    private func post(_ body: String) -> SinkOutcome {
        beaconbridge_curl_easy_reset(handle)
        errorBuffer[0] = 0
        var list: UnsafeMutablePointer<curl_slist>?
        for line in headers { list = beaconbridge_curl_slist_append(list, line) }
        defer { beaconbridge_curl_slist_free_all(list) }
        var bytes = Array(body.utf8)
        let code: CURLcode = bytes.withUnsafeMutableBytes { raw in
            var setup = beaconbridge_curl_setopt_string(handle, CURLOPT_URL, settings.url)
            func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_POST, 1))
            set(beaconbridge_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, raw.baseAddress))
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, raw.count))
            set(beaconbridge_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list))
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(settings.timeout * 1000)))
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(min(settings.timeout, 10) * 1000)))
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
            set(beaconbridge_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
            set(beaconbridge_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
            set(beaconbridge_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
            set(beaconbridge_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size * count })
            if let caFile = settings.caFile { set(beaconbridge_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)) }
            guard setup == CURLE_OK else { return setup }
            return beaconbridge_curl_easy_perform(handle)
        }
        guard code == CURLE_OK else {
            let detail =
                errorBuffer[0] != 0
                ? String(cString: errorBuffer)
                : String(cString: beaconbridge_curl_easy_strerror(code))
            return .failed(reason: "\(detail) (curl \(code.rawValue))", retryAfter: nil)
        }
        var status = 0
        _ = beaconbridge_curl_response_code(handle, &status)
        var retryAfter: Int64 = -1
        _ = beaconbridge_curl_retry_after(handle, &retryAfter)
        return WebhookSink.outcome(status: status, retryAfter: retryAfter >= 0 ? Double(retryAfter) : nil)
    }

    /// What an HTTP status means for the events.
    public static func outcome(status: Int, retryAfter: Double?) -> SinkOutcome {
        if (200...299).contains(status) { return .acknowledged }
        if refusingStatuses.contains(status) { return .refused(reason: "HTTP \(status)") }
        return .failed(reason: "HTTP \(status)", retryAfter: retryAfter)
    }
}

/// A libcurl or webhook setup failure, with the call that failed.
public struct WebhookError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var message: String

    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    public var description: String { "\(operation): \(message)" }
}
