import BeaconConfigReading
import BeaconEvents

extension WebhookSettings {
    /// The `webhook:` section. Ranges and combinations are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init(url: r.requiredString("url") ?? "")
        let named: [(name: String, value: String)] = r.namedValues("headers", of: String.self)
        headers = named.map { Header(name: $0.name, value: $0.value) }
        tokenFile = r.string("token_file")
        tokenEnv = r.string("token_env")
        if r.entry("token") != nil {
            r.issue(
                "a token does not belong in the configuration file: put it in a file (`token_file`) or an "
                    + "environment variable (`token_env`)", key: "token")
        }
        caFile = r.string("ca_file")
        timeout = r.duration("timeout_s", default: timeout)
        retryMin = r.duration("retry_min_s", default: retryMin)
        retryMax = r.duration("retry_max_s", default: retryMax)
        batchSize = r.value("batch_size", default: batchSize)
        if r.has("kinds") {
            let names: [String] = r.list("kinds", of: String.self)
            var chosen: [EventKind] = []
            for name in names {
                if let kind = EventKind(rawValue: name) {
                    if !chosen.contains(kind) { chosen.append(kind) }
                } else {
                    r.issue(
                        "`\(name)` is not an event kind (\(EventKind.allCases.map(\.rawValue).joined(separator: ", ")))",
                        key: "kinds")
                }
            }
            kinds = chosen
        } else {
            r.declare(["kinds"])
        }
    }
}
