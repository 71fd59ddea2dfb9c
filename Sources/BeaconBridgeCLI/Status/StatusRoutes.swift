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
        case metrics = "/metrics"
        /// Starts a room training: the body is the JSON of the MQTT `train` command (docs/rooms.md).
        case train = "/actions/rooms/train"

        var methods: [String] { self == .train ? ["POST"] : ["GET", "HEAD"] }
        var needs: HTTPAccess.Need { self == .train ? .action : .read }
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
        case .page:
            board.notePageView()
            return HTTPResponse(
                status: 200, contentType: "text/html; charset=utf-8",
                text: StatusPage.render(board.snapshot, replies: board.lastReplies))
        case .train:
            // The body is judged by the rooms command's own parser on the loop (RoomCommand.parse); its reply
            // (started, refused, done) shows on the page.
            guard board.post(.roomCommand(verb: "train", payload: request.body)) else {
                return .refusal(HTTPRefusal(409, "rooms are off on this gateway (rooms.enabled)"))
            }
            return HTTPResponse(status: 202, text: "202 Accepted: training requested; its progress is on the page\n")
        }
    }
}
