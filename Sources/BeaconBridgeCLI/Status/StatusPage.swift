/// The status page (`/`): server-rendered HTML from the status snapshot, everything inline (no asset from
/// anywhere), readable on a phone. docs/status-page.md says what each part shows. The live part (`live`, also
/// served alone at `/part`) is what the page's few lines of script fetch again every `refreshSeconds`; the forms
/// of the actions stay as they are meanwhile.
enum StatusPage {
    static let refreshSeconds = 5

    static func render(_ s: StatusSnapshot, replies: [String] = []) -> String {
        var html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>BeaconBridge \(escaped(s.gatewayID))</title>
            <style>body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60em;padding:.5em}
            table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.2em .4em;border-bottom:1px solid #ddd;vertical-align:top}
            h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.2em}.n{text-align:right}small{color:#555}
            svg.rssi{display:block;background:#f3f5f9}svg.rssi polyline{fill:none;stroke:#2a6fdb;stroke-width:1.5}
            form.action label{display:inline-block;margin:.2em .6em .2em 0}</style></head><body>
            <h1>Gateway <span id="gateway">\(escaped(s.gatewayID))</span></h1>
            <div id="live">
            """
        html += live(s, replies: replies)
        html += "</div>\n"
        html += actions(s)
        html += script
        html += "</body></html>\n"
        return html
    }

    /// The parts that change: the overview, the outbox, the beacons, rooms and regions with what runs, the last
    /// replies to actions.
    static func live(_ s: StatusSnapshot, replies: [String]) -> String {
        var html = "<section id=\"overview\"><table>"
        html += row("Mode", s.isReplay ? "replaying a capture" : "scanning")
        html += row("Up", "\(Int(s.uptime)) s", id: "uptime")
        html += row("Reports", "\(s.reports)", id: "reports")
        html += row("Beacons tracked", "\(s.trackedBeacons)", id: "beacons-tracked")
        html += row("Broker", s.brokerConnected ? "connected" : "not connected", id: "broker")
        if let leader = s.roomsLeader { html += row("Rooms leader", leader ? "this gateway" : "another gateway") }
        html += "</table></section>\n"
        html += "<section id=\"outbox\"><h2>Outbox</h2><table>"
        html += row("Waiting (mqtt)", "\(s.backlogRows)", id: "outbox-mqtt")
        if let webhook = s.webhookBacklog { html += row("Waiting (webhook)", "\(webhook)", id: "outbox-webhook") }
        html += row("Dead letters", "\(s.deadLetterRows)", id: "dead-letters")
        html += "</table></section>\n"
        html += beacons(s)
        if s.roomsLeader != nil { html += rooms(s) }
        if !s.regionNames.isEmpty || !s.teaches.isEmpty { html += regions(s) }
        if !replies.isEmpty {
            html += "<section><h2>Replies to actions</h2><ul id=\"replies\">"
            for reply in replies.reversed() { html += "<li><code>\(escaped(reply))</code></li>" }
            html += "</ul></section>\n"
        }
        return html
    }

    /// A progress bar with its percentage (`id` on the figure).
    static func progress(_ fraction: Double, id: String? = nil) -> String {
        let percent = Int((max(0, min(1, fraction)) * 100).rounded())
        let attribute = id.map { " id=\"\($0)\"" } ?? ""
        return "<progress max=\"100\" value=\"\(percent)\"></progress> <span\(attribute)>\(percent)</span> %"
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
