import BeaconTracking

/// The status page (`/`): server-rendered HTML from the status snapshot, everything inline (no asset from
/// anywhere), readable on a phone. docs/status-page.md says what each part shows.
enum StatusPage {
    static func render(_ s: StatusSnapshot, replies: [String] = []) -> String {
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
        html += "</table></section>\n"
        html += beacons(s)
        if s.roomsLeader != nil { html += rooms(s, replies: replies) }
        html += "</body></html>\n"
        return html
    }

    /// The most recently seen beacons (copied while the page is viewed: the first view after a quiet minute
    /// shows them from the next second).
    static func beacons(_ s: StatusSnapshot) -> String {
        var html = "<section id=\"beacons\"><h2>Beacons (\(s.trackedBeacons) tracked)</h2>"
        guard !s.beacons.isEmpty else { return html + "<p>None listed yet; reload in a second.</p></section>\n" }
        html += "<div style=\"overflow-x:auto\"><table><tr><th>Beacon</th><th>Format</th><th class=\"n\">RSSI</th>"
        html +=
            "<th class=\"n\">Filtered</th><th class=\"n\">Distance</th><th>Presence</th><th class=\"n\">Seen</th></tr>"
        for row in s.beacons {
            let name =
                row.name.map { "\(escaped($0))<br><small>\(escaped(row.beaconID))</small>" } ?? escaped(row.beaconID)
            html += "<tr class=\"beacon\"><td>\(name)</td><td>\(escaped(row.format))</td>"
            html += "<td class=\"n\">\(row.rssi.map { "\($0) dBm" } ?? "-")</td>"
            html += "<td class=\"n\">\(row.smoothedRSSI.map { "\(Int($0.rounded())) dBm" } ?? "-")</td>"
            html += "<td class=\"n\">\(row.distance.map { "\(Double(Int(($0 * 10).rounded())) / 10) m" } ?? "-")</td>"
            html += "<td>\(row.presence.rawValue)</td><td class=\"n\">\(Int(row.age.rounded())) s ago</td></tr>"
        }
        return html + "</table></div></section>\n"
    }

    /// Rooms: what was trained (fingerprints), the walk that runs with its progress, the last replies, and the
    /// form that starts a training (POST with the action token, by the small script below).
    static func rooms(_ s: StatusSnapshot, replies: [String]) -> String {
        var html = "<section id=\"rooms\"><h2>Rooms</h2><table><tr><th>Room</th><th>Trained</th></tr>"
        for room in s.siteRooms {
            let trained = s.fingerprints.first { $0.room == room }.map {
                "\($0.walks) walk(s), \(Int($0.seconds)) s, quality \(Int($0.quality.rounded())) dB"
            }
            html += "<tr><td>\(escaped(room))</td><td>\(escaped(trained ?? "not trained"))</td></tr>"
        }
        html += "</table>"
        if let training = s.training {
            let percent = Int((training.fraction * 100).rounded())
            html +=
                "<p id=\"training\">Training <b>\(escaped(training.room))</b> with \(escaped(training.device)): "
                + "<progress max=\"100\" value=\"\(percent)\"></progress> <span id=\"training-percent\">\(percent)</span> %</p>"
        }
        if !replies.isEmpty {
            html += "<h3>Replies</h3><ul id=\"replies\">"
            for reply in replies.reversed() { html += "<li><code>\(escaped(reply))</code></li>" }
            html += "</ul>"
        }
        let options = s.siteRooms.map { "<option>\(escaped($0))</option>" }.joined()
        html += """
            <form id="train"><h3>Train a room</h3>
            <label>Room <select name="room">\(options)</select></label>
            <label>Beacon id <input name="device" required size="30"></label>
            <label>Seconds <input name="seconds" type="number" value="60" min="1" max="600"></label>
            <label>Action token <input name="token" type="password" required></label>
            <button>Start</button> <span id="train-result"></span></form>
            <script>
            document.getElementById("train").addEventListener("submit", async (e) => {
              e.preventDefault();
              const f = e.target, out = document.getElementById("train-result");
              const body = JSON.stringify({room: f.room.value, device: f.device.value, seconds: Number(f.seconds.value)});
              const r = await fetch("/actions/rooms/train", {method: "POST", body,
                headers: {"Authorization": "Bearer " + f.token.value, "Content-Type": "application/json"}});
              out.textContent = r.status + " " + (await r.text());
              if (r.ok) setTimeout(() => location.reload(), 1500);
            });
            </script></section>

            """
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
