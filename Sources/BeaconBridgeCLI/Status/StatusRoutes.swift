import BeaconTracking
import StatusServer

/// The paths the status server answers (docs/status-page.md), and in what order a request is judged: an unknown
/// path is 404, a known one with another method 405 (with `Allow`), then the token (401, or 403 for an action
/// with actions off), then the route. Runs on the HTTP thread: it reads the board and never blocks.
struct StatusRoutes: Sendable {
    let board: StatusBoard
    let access: HTTPAccess
    /// The server's counters, once it exists (the handler is made before the server).
    let httpCounters: @Sendable () -> StatusHTTPCounters.Snapshot

    enum Route: String, CaseIterable {
        case page = "/"
        /// The page's live part (what the page's script fetches every few seconds).
        case part = "/part"
        case metrics = "/metrics"
        /// Starts a room training: the body is the JSON of the MQTT `train` command (docs/rooms.md).
        case train = "/actions/rooms/train"
        /// A regions command, the body the JSON of the MQTT `teach` / `forget` command (docs/teach.md).
        case teach = "/actions/regions/teach"
        case forget = "/actions/regions/forget"

        var isAction: Bool { self == .train || self == .teach || self == .forget }
        var methods: [String] { isAction ? ["POST"] : ["GET", "HEAD"] }
        var needs: HTTPAccess.Need { isAction ? .action : .read }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let route = Route(rawValue: request.path) else {
            return .refusal(HTTPRefusal(404, "no such page; try / or /metrics"))
        }
        guard route.methods.contains(request.method) else {
            return .refusal(
                HTTPRefusal(405, "\(request.method) is not allowed here"),
                headers: [("Allow", route.methods.joined(separator: ", "))])
        }
        if let refusal = access.check(request, needs: route.needs) {
            return .refusal(refusal, headers: refusal.status == 401 ? [HTTPAccess.challenge] : [])
        }
        switch route {
        case .metrics:
            let text = MetricsPage.render(
                board.snapshot, http: httpCounters(), cpuSeconds: ProcessStatistics.cpuSeconds(),
                residentBytes: ProcessStatistics.residentBytes())
            return HTTPResponse(status: 200, contentType: PrometheusText.contentType, text: text)
        case .page, .part:
            board.notePageView()
            let snapshot = board.snapshot
            let replies = board.lastReplies
            return HTTPResponse(
                status: 200, contentType: "text/html; charset=utf-8",
                text: route == .page
                    ? StatusPage.render(snapshot, replies: replies) : StatusPage.live(snapshot, replies: replies))
        case .teach, .forget:
            return regionsCommand(route == .teach ? "teach" : "forget", body: request.body)
        case .train:
            // The body is judged by the rooms command's own parser on the loop (RoomCommand.parse); its reply
            // (started, refused, done) shows on the page.
            guard board.snapshot.roomsLeader != nil, board.post(.roomCommand(verb: "train", payload: request.body))
            else {
                return .refusal(HTTPRefusal(409, "rooms are off on this gateway (rooms.enabled)"))
            }
            return HTTPResponse(status: 202, text: "202 Accepted: training requested; its progress is on the page\n")
        }
    }

    /// A teach or forget from the page: judged here by the MQTT command's own parser, so a bad field is a `400`
    /// naming it at once; a teach of a device whose teach runs is a `409`; a good one is handed to the loop, which
    /// runs it as the MQTT command on this gateway (its replies and progress show on the page).
    func regionsCommand(_ verb: String, body: [UInt8]) -> HTTPResponse {
        let snapshot = board.snapshot
        switch TeachCommand.parse(verb: verb, payload: body, regions: Set(snapshot.regionNames)) {
        case let .failure(failure):
            return .refusal(HTTPRefusal(400, "\(failure.step): \(failure.message)"))
        case let .success(command):
            if case let .teach(_, _, device, _, _) = command, snapshot.teaches.contains(where: { $0.device == device })
            {
                return .refusal(HTTPRefusal(409, "device: a teach of `\(String(device.prefix(64)))` runs already"))
            }
        }
        guard board.post(.regionCommand(verb: verb, payload: body)) else {
            return .refusal(HTTPRefusal(409, "the daemon does not take actions now (starting or stopping)"))
        }
        return HTTPResponse(status: 202, text: "202 Accepted: \(verb) requested; its progress is on the page\n")
    }
}
