import BeaconTracking

extension StatusPage {
    /// The most recently seen beacons (copied while the page is viewed: the first view after a quiet minute
    /// shows them from the next second): each with its RSSI over the last minutes, its region states and, with
    /// rooms, its room and the rooms' probabilities.
    static func beacons(_ s: StatusSnapshot) -> String {
        var html = "<section id=\"beacons\"><h2>Beacons (\(s.trackedBeacons) tracked)</h2>"
        guard !s.beacons.isEmpty else {
            return html + "<p>None listed yet; the list follows in a few seconds.</p></section>\n"
        }
        let withRooms = s.roomsLeader != nil
        html += "<div style=\"overflow-x:auto\"><table><tr><th>Beacon</th><th>Format</th><th class=\"n\">RSSI</th>"
        html += "<th class=\"n\">Filtered</th><th class=\"n\">Distance</th><th>Presence</th><th>Regions</th>"
        html += withRooms ? "<th>Room</th>" : ""
        html += "<th class=\"n\">Seen</th></tr>"
        for row in s.beacons {
            let name =
                row.name.map { "\(escaped($0))<br><small>\(escaped(row.beaconID))</small>" } ?? escaped(row.beaconID)
            html += "<tr class=\"beacon\"><td>\(name)</td><td>\(escaped(row.format))</td>"
            html += "<td class=\"n\">\(row.rssi.map { "\($0) dBm" } ?? "-")"
            html += sparkline(s.rssi[row.beaconID] ?? []) + "</td>"
            html += "<td class=\"n\">\(row.smoothedRSSI.map { "\(Int($0.rounded())) dBm" } ?? "-")</td>"
            html += "<td class=\"n\">\(row.distance.map { "\(Double(Int(($0 * 10).rounded())) / 10) m" } ?? "-")</td>"
            html += "<td>\(row.presence.rawValue)</td><td class=\"regions\">"
            html +=
                row.regions.isEmpty
                ? "-"
                : row.regions.map {
                    "<span data-region=\"\(escaped($0.name))\">\(escaped($0.name)): \($0.state.rawValue)</span>"
                }.joined(separator: "<br>")
            html += "</td>"
            if withRooms { html += "<td class=\"room\">\(room(s.beaconRooms[row.beaconID]))</td>" }
            html += "<td class=\"n\">\(Int(row.age.rounded())) s ago</td></tr>"
        }
        return html + "</table></div></section>\n"
    }

    /// The decided room in bold, then each room's probability (most likely first), or `-`.
    static func room(_ room: BeaconRoom?) -> String {
        guard let room else { return "-" }
        var html = "<b class=\"decided\">\(escaped(room.room ?? "deciding"))</b>"
        if !room.probabilities.isEmpty {
            html +=
                "<br><small>"
                + room.probabilities.map {
                    "<span class=\"p\" data-room=\"\(escaped($0.room))\">\(escaped($0.room)) \(Int(($0.probability * 100).rounded())) %</span>"
                }.joined(separator: ", ") + "</small>"
        }
        return html
    }

    /// A small inline SVG of one sample a second (`RSSIHistory`), newest at the right edge, -100 dBm at the
    /// bottom and -30 dBm at the top; a second without a report breaks the line. Empty without any sample.
    static func sparkline(_ values: [Int8]) -> String {
        guard values.contains(where: { $0 != RSSIHistory.gap }) else { return "" }
        let width = RSSIHistory.samples
        let height = 30
        let low = -100.0
        let high = -30.0
        var lines: [String] = []
        var points = ""
        let offset = width - values.count
        for (index, value) in values.enumerated() {
            guard value != RSSIHistory.gap else {
                if !points.isEmpty { lines.append(points) }
                points = ""
                continue
            }
            let level = min(high, max(low, Double(value)))
            let y = Int(((high - level) / (high - low) * Double(height)).rounded())
            let x = offset + index
            // A lone sample is drawn as a short dash.
            points += points.isEmpty ? "\(x),\(y) \(x + 1),\(y)" : " \(x + 1),\(y)"
        }
        if !points.isEmpty { lines.append(points) }
        let polylines = lines.map { "<polyline points=\"\($0)\"/>" }.joined()
        return
            "<svg class=\"rssi\" viewBox=\"0 0 \(width + 1) \(height)\" preserveAspectRatio=\"none\" width=\"120\" height=\"24\" "
            + "role=\"img\" aria-label=\"RSSI, last \(width / 60) minutes\">\(polylines)</svg>"
    }
}
