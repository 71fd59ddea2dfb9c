/// The status page (`/`): server-rendered HTML from the status snapshot, everything inline (no asset from
/// anywhere), readable on a phone. docs/status-page.md says what each part shows.
enum StatusPage {
    static func render(_ s: StatusSnapshot) -> String {
        var html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>BeaconBridge \(escaped(s.gatewayID))</title>
            <style>body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60em;padding:.5em}
            table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.2em .4em;border-bottom:1px solid #ddd}
            h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.2em}.n{text-align:right}</style></head><body>
            <h1>Gateway <span id="gateway">\(escaped(s.gatewayID))</span></h1>

            """
        html += "<section id=\"overview\"><table>"
        html += row("Mode", s.isReplay ? "replaying a capture" : "scanning")
        html += row("Up", "\(Int(s.uptime)) s")
        html += row("Reports", "\(s.reports)", id: "reports")
        html += row("Beacons tracked", "\(s.trackedBeacons)", id: "beacons-tracked")
        html += row("Broker", s.brokerConnected ? "connected" : "not connected", id: "broker")
        if let leader = s.roomsLeader { html += row("Rooms leader", leader ? "this gateway" : "another gateway") }
        html += "</table></section>\n"
        html += "<section id=\"outbox\"><h2>Outbox</h2><table>"
        html += row("Waiting (mqtt)", "\(s.backlogRows)", id: "outbox-mqtt")
        if let webhook = s.webhookBacklog { html += row("Waiting (webhook)", "\(webhook)", id: "outbox-webhook") }
        html += row("Dead letters", "\(s.deadLetterRows)", id: "dead-letters")
        html += "</table></section>\n</body></html>\n"
        return html
    }

    static func row(_ name: String, _ value: String, id: String? = nil) -> String {
        let attribute = id.map { " id=\"\($0)\"" } ?? ""
        return "<tr><th>\(escaped(name))</th><td\(attribute)>\(escaped(value))</td></tr>"
    }

    /// Text for HTML: `&`, `<`, `>`, `"` and `'` escaped.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
