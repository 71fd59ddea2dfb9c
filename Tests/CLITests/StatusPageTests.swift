import BeaconDelivery
import StatusServer
import Synchronization
import Testing

@testable import BeaconBridgeCLI
@testable import BeaconModel
@testable import BeaconTracking

/// The status page's parts without a daemon: the RSSI history, the plot, the beacon rows with regions and rooms,
/// the forms, and the regions actions' route (its refusals and what it hands to the daemon).
@Suite struct StatusPageTests {
    static func row(_ id: String, rssi: Int? = -60, age: Double = 0.5, regions: [(String, RegionState)] = [])
        -> TrackedBeaconRow
    {
        TrackedBeaconRow(
            beaconID: id, format: "ibeacon", name: nil, rssi: rssi, smoothedRSSI: -61, distance: 1.25,
            presence: .seen, age: age, regions: regions.map { TrackedBeaconRow.Region(name: $0.0, state: $0.1) })
    }

    @Test func theHistoryKeepsASampleASecondPerListedBeaconBounded() {
        var history = RSSIHistory()
        history.record([Self.row("a", rssi: -50), Self.row("b", rssi: -70)])
        history.record([Self.row("a", rssi: -52), Self.row("b", rssi: -71, age: 3)])  // b not heard this second
        #expect(history.series(of: "a") == [-50, -52])
        #expect(history.series(of: "b") == [-70, RSSIHistory.gap])
        history.record([Self.row("a", rssi: -53)])  // b no longer listed: its ring goes
        #expect(history.series(of: "b") == [])
        for value in 0..<(RSSIHistory.samples + 20) { history.record([Self.row("a", rssi: -40 - value % 50)]) }
        let series = history.series(of: "a")
        #expect(series.count == RSSIHistory.samples)
        #expect(series.last == Int8(-40 - (RSSIHistory.samples + 19) % 50))
        history.clear()
        #expect(history.rings.isEmpty)
    }

    @Test func theSparklineBreaksAtGapsAndIsEmptyWithoutSamples() {
        #expect(StatusPage.sparkline([]) == "")
        #expect(StatusPage.sparkline([RSSIHistory.gap, RSSIHistory.gap]) == "")
        let svg = StatusPage.sparkline([-30, -100, RSSIHistory.gap, -65, -120])
        #expect(svg.hasPrefix("<svg class=\"rssi\""))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        // Right-aligned: the last sample ends at the right edge; -30 dBm at the top, -100 (and below) at the bottom.
        #expect(svg.contains("points=\"175,0 176,0 177,30\""))
        #expect(svg.contains("179,15 180,30\""))
        #expect(!svg.contains("http"), "no external reference")
    }

    @Test func beaconRowsShowRegionsRoomProbabilitiesAndThePlot() {
        var s = StatusSnapshot()
        s.gatewayID = "gw<1>"
        s.roomsLeader = true
        s.siteRooms = ["hall", "lab"]
        s.regionNames = ["desk"]
        s.beacons = [Self.row("ibeacon:x:1:2", regions: [("desk", .inside)])]
        s.rssi = ["ibeacon:x:1:2": [-60, -61, -62]]
        s.beaconRooms = [
            "ibeacon:x:1:2": BeaconRoom(room: "lab", probabilities: [("lab", 0.82), ("hall", 0.18)])
        ]
        let html = StatusPage.render(s)
        #expect(html.contains("Gateway <span id=\"gateway\">gw&lt;1&gt;</span>"))
        #expect(html.contains("<span data-region=\"desk\">desk: inside</span>"))
        #expect(html.contains("<b class=\"decided\">lab</b>"))
        #expect(
            html.contains(
                "<span class=\"p\" data-room=\"lab\">lab 82 %</span>, <span class=\"p\" data-room=\"hall\">hall 18 %</span>"
            ))
        #expect(html.contains("<svg class=\"rssi\""))
        #expect(html.contains("<div id=\"live\">"))
        #expect(html.contains("fetch(new URL(\"/part\", location.origin)"), "the live refresh")
        // Actions off: no forms, a line that says so.
        #expect(!html.contains("<form") && html.contains("this gateway has no action token"))
        s.actionsEnabled = true
        let withActions = StatusPage.render(s)
        #expect(withActions.contains("id=\"train\" data-action=\"/actions/rooms/train\""))
        #expect(withActions.contains("id=\"teach\" data-action=\"/actions/regions/teach\""))
        #expect(withActions.contains("id=\"forget\" data-action=\"/actions/regions/forget\""))
        #expect(withActions.contains("<option>desk</option>"))
        // The live part alone has no forms and no script (the refresh replaces it, the forms stay).
        let live = StatusPage.live(s, replies: ["{\"ok\":true}"])
        #expect(!live.contains("<form") && !live.contains("<script"))
        #expect(live.contains("<ul id=\"replies\"><li><code>{&quot;ok&quot;:true}</code></li>"))
    }

    @Test func runningTeachesShowTheirProgress() {
        var s = StatusSnapshot()
        s.regionNames = ["desk"]
        s.teaches = [
            TeachProgress(region: "desk", device: "d1", spot: "boundary", seconds: 30, secondsLeft: 12, reports: 17)
        ]
        let html = StatusPage.live(s, replies: [])
        #expect(html.contains("Teaching <b>desk</b> at boundary with d1: <progress max=\"100\" value=\"60\">"))
        #expect(html.contains("17 reports, 12 s left"))
    }

    /// `POST /actions/regions/teach|forget`: refused by the token (401, 403), the method (405), a bad field (400
    /// naming it), a teach of a device already being taught (409); a good one is handed to the daemon as is.
    @Test func regionsActionsAreJudgedThenHandedToTheDaemon() {
        let board = StatusBoard()
        var s = StatusSnapshot()
        s.regionNames = ["desk", "hall"]
        s.teaches = [
            TeachProgress(region: "desk", device: "busy-1", spot: "boundary", seconds: 30, secondsLeft: 5, reports: 3)
        ]
        board.publish(s)
        let posted = Mutex<[DaemonInput]>([])
        board.connectActions { input in
            posted.withLock { $0.append(input) }
            return true
        }
        let routes = StatusRoutes(
            board: board, access: HTTPAccess(readToken: "r", actionToken: "a"),
            httpCounters: { StatusHTTPCounters.Snapshot() })
        func post(_ path: String, _ body: String, token: String? = "a", method: String = "POST") -> (Int, String) {
            var headers: [String: String] = [:]
            if let token { headers["authorization"] = "Bearer \(token)" }
            let response = routes.respond(
                to: HTTPRequest(method: method, path: path, headers: headers, body: Array(body.utf8)))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        let teach = "/actions/regions/teach"
        let good = #"{"region":"desk","device":"d-2","at":"boundary","seconds":20}"#
        #expect(post(teach, good, token: nil).0 == 401)
        #expect(post(teach, good, token: "r").0 == 401, "the read token does not act")
        #expect(post(teach, good, method: "GET").0 == 405)
        let noDevice = post(teach, #"{"region":"desk","at":"boundary"}"#)
        #expect(noDevice.0 == 400 && noDevice.1.hasPrefix("400 Bad Request: device: "), "\(noDevice.1)")
        let badRegion = post(teach, #"{"region":"attic","device":"d","at":"boundary"}"#)
        #expect(
            badRegion.0 == 400 && badRegion.1.hasPrefix("400 Bad Request: region: ") && badRegion.1.contains("attic"))
        let badSeconds = post(teach, #"{"region":"desk","device":"d","at":"boundary","seconds":500}"#)
        #expect(badSeconds.0 == 400 && badSeconds.1.hasPrefix("400 Bad Request: seconds: "))
        #expect(post(teach, "not json").1.hasPrefix("400 Bad Request: payload: "))
        let busy = post(teach, #"{"region":"desk","device":"busy-1","at":"boundary"}"#)
        #expect(busy.0 == 409 && busy.1.contains("busy-1"))
        #expect(posted.withLock { $0.isEmpty }, "nothing refused reached the daemon")
        #expect(post(teach, good).0 == 202)
        #expect(post("/actions/regions/forget", #"{"region":"hall","device":"d-2"}"#).0 == 202)
        let inputs = posted.withLock { $0 }
        #expect(inputs.count == 2)
        if case let .regionCommand(verb, payload) = inputs.first {
            #expect(verb == "teach" && payload == Array(good.utf8))
        } else {
            Issue.record("not a regions command: \(inputs)")
        }
        if case let .regionCommand(verb, _) = inputs.last { #expect(verb == "forget") }
        // Actions off: 403.
        let off = StatusRoutes(
            board: board, access: HTTPAccess(readToken: "r", actionToken: nil),
            httpCounters: { StatusHTTPCounters.Snapshot() })
        let refused = off.respond(
            to: HTTPRequest(method: "POST", path: teach, headers: ["authorization": "Bearer r"], body: Array(good.utf8))
        )
        #expect(refused.status == 403)
        // The live part is served alone, as the page's script asks.
        let part = routes.respond(to: HTTPRequest(method: "GET", path: "/part", headers: ["authorization": "Bearer r"]))
        #expect(part.status == 200 && !String(decoding: part.body, as: UTF8.self).contains("<html"))
    }

    /// `/metrics` writes the delivery latency histogram from the snapshot: every bucket cumulative, `+Inf` = count.
    @Test func metricsCarryTheDeliveryLatencyHistogram() {
        var s = StatusSnapshot()
        for seconds in [0.002, 0.004, 0.03, 0.7, 45] { s.latency.observe(seconds) }
        let text = MetricsPage.render(s, http: StatusHTTPCounters.Snapshot(), cpuSeconds: 1, residentBytes: nil)
        let name = "beaconbridge_delivery_latency_seconds"
        #expect(text.contains("# TYPE \(name) histogram\n"))
        for (bound, count) in [
            ("0.005", 2), ("0.01", 2), ("0.025", 2), ("0.05", 3), ("0.5", 3), ("1", 4), ("30", 4), ("60", 5),
            ("1800", 5),
            ("+Inf", 5),
        ] {
            #expect(text.contains("\(name)_bucket{le=\"\(bound)\"} \(count)\n"), "le=\(bound)")
        }
        #expect(text.contains("\(name)_count 5\n"))
        #expect(text.contains("\(name)_sum 45.73"))
    }
}
