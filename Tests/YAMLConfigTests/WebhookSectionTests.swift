import BeaconDelivery
import Testing

@testable import YAMLConfig

/// The `webhook` section through the real YAML loader: values reach the settings, and every problem is
/// reported with its key path.
@Suite struct WebhookSectionTests: SectionLoading {
    let hostname = "hall"

    @Test func absentByDefaultAndValuesReachTheSettings() throws {
        #expect(try load("gateway: {id: hall}\n").get().webhook == nil)
        let w = try #require(
            try load(
                """
                webhook:
                  url: https://hooks.example.net/beacons?k=1
                  headers:
                    X-Site: hall
                  token_file: /etc/beaconbridge/webhook.token
                  ca_file: /etc/beaconbridge/ca.pem
                  timeout_s: 5
                  retry_min_s: 500ms
                  retry_max_s: 2m
                  batch_size: 10
                  kinds: [presence, region, sighting]
                """
            ).get().webhook)
        #expect(w.url == "https://hooks.example.net/beacons?k=1" && w.isHTTPS)
        #expect(w.headers == [WebhookSettings.Header(name: "X-Site", value: "hall")])
        #expect(w.tokenFile == "/etc/beaconbridge/webhook.token" && w.tokenEnv == nil)
        #expect(w.caFile == "/etc/beaconbridge/ca.pem")
        #expect(w.timeout == 5 && w.retryMin == 0.5 && w.retryMax == 120 && w.batchSize == 10)
        #expect(w.kinds == [.presence, .region, .sighting])
        #expect(WebhookSettings.redacted(w.url) == "https://hooks.example.net/beacons?...")
        let defaults = try #require(try load("webhook: {url: 'http://127.0.0.1:8080/'}\n").get().webhook)
        #expect(defaults.kinds == [.presence, .region, .room] && defaults.batchSize == 20 && defaults.timeout == 10)
    }

    @Test func everyProblemIsReportedWithItsKey() {
        let found = problems(
            """
            webhook:
              url: ftp://example.net/x
              token: abc
              token_file: relative/path
              token_env: HOOK_TOKEN
              ca_file: /etc/ca.pem
              headers:
                Authorization: Basic abc
              timeout_s: 0
              retry_min_s: 10
              retry_max_s: 1
              batch_size: 0
              kinds: [presence, nonsense]
              colour: blue
            """)
        for expected in [
            "webhook.url", "webhook.token:", "webhook.token_file", "webhook.token_env", "webhook.ca_file",
            "webhook.headers.Authorization", "webhook.timeout_s", "webhook.retry_max_s", "webhook.batch_size",
            "webhook.kinds", "webhook.colour",
        ] {
            #expect(found.contains { $0.contains(expected) }, "\(expected) missing in \(found)")
        }
        #expect(!found.contains { $0.contains("abc") && !$0.contains("Authorization") }, "\(found)")
        #expect(problems("webhook: {}\n").contains { $0.contains("webhook.url") })
    }
}
