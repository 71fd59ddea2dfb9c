extension StatusPage {
    /// Rooms: what was trained (fingerprints) and the walk that runs with its progress.
    static func rooms(_ s: StatusSnapshot) -> String {
        var html = "<section id=\"rooms\"><h2>Rooms</h2><table><tr><th>Room</th><th>Trained</th></tr>"
        for room in s.siteRooms {
            let trained = s.fingerprints.first { $0.room == room }.map {
                "\($0.walks) walk(s), \(Int($0.seconds)) s, quality \(Int($0.quality.rounded())) dB"
            }
            html += "<tr><td>\(escaped(room))</td><td>\(escaped(trained ?? "not trained"))</td></tr>"
        }
        html += "</table>"
        if let training = s.training {
            html +=
                "<p id=\"training\">Training <b>\(escaped(training.room))</b> with \(escaped(training.device)): "
                + progress(training.fraction, id: "training-percent") + "</p>"
        }
        return html + "</section>\n"
    }

    /// Regions: the configured ones and the teaches running here with their progress.
    static func regions(_ s: StatusSnapshot) -> String {
        var html = "<section id=\"regions\"><h2>Regions</h2>"
        html +=
            "<p>\(s.regionNames.isEmpty ? "None configured." : s.regionNames.map(escaped).joined(separator: ", "))</p>"
        if !s.teaches.isEmpty {
            html += "<ul id=\"teaches\">"
            for teach in s.teaches {
                html +=
                    "<li class=\"teach\">Teaching <b>\(escaped(teach.region ?? "1 m reference"))</b> at \(escaped(teach.spot)) "
                    + "with \(escaped(teach.device)): \(progress(teach.fraction)), \(teach.reports) reports, "
                    + "\(Int(teach.secondsLeft.rounded())) s left</li>"
            }
            html += "</ul>"
        }
        return html + "</section>\n"
    }

    /// The forms that start something (with the action token: without it the page says that actions are off).
    /// Each posts the JSON of its MQTT command with the token typed here; the answer shows beside its button,
    /// the progress in the live part above.
    static func actions(_ s: StatusSnapshot) -> String {
        guard s.actionsEnabled else {
            return "<section id=\"actions\"><h2>Actions</h2><p>Off: this gateway has no action token "
                + "(<code>http.action_token_file</code>).</p></section>\n"
        }
        var html = """
            <section id="actions"><h2>Actions</h2>
            <label>Action token <input id="action-token" type="password" autocomplete="off"></label>

            """
        if s.roomsLeader != nil {
            let rooms = s.siteRooms.map { "<option>\(escaped($0))</option>" }.joined()
            html += """
                <form class="action" id="train" data-action="/actions/rooms/train"><h3>Train a room</h3>
                <label>Room <select name="room">\(rooms)</select></label>
                <label>Beacon id <input name="device" required size="30"></label>
                <label>Seconds <input name="seconds" type="number" value="60" min="1" max="600"></label>
                <button>Start</button> <span class="result"></span></form>

                """
        }
        let regions = s.regionNames.map { "<option>\(escaped($0))</option>" }.joined()
        html += """
            <form class="action" id="teach" data-action="/actions/regions/teach"><h3>Teach a region</h3>
            <label>Region <select name="region"><option value="">none (1 m reference)</option>\(regions)</select></label>
            <label>Beacon id <input name="device" required size="30"></label>
            <label>At <select name="at"><option>boundary</option><option>inside</option><option>1m</option></select></label>
            <label>Seconds <input name="seconds" type="number" value="30" min="1" max="120"></label>
            <button>Start</button> <span class="result"></span></form>
            <form class="action" id="forget" data-action="/actions/regions/forget"><h3>Forget what was taught</h3>
            <label>Region <select name="region"><option value="">none (the 1 m reference)</option>\(regions)</select></label>
            <label>Beacon id <input name="device" required size="30"></label>
            <button>Forget</button> <span class="result"></span></form>
            </section>

            """
        return html
    }

    /// The page's only script: the live part fetched again every `refreshSeconds` (same origin, the browser's own
    /// login), and the forms posted as JSON with the action token. Both address `location.origin`: a page opened
    /// as `http://user:token@gateway:9120/` would otherwise resolve relative URLs with those credentials, and the
    /// Fetch standard makes `fetch` refuse such a URL (a TypeError: the form stayed at "sending...").
    static var script: String {
        """
        <script>
        const live = document.getElementById("live");
        setInterval(async () => {
          try { const r = await fetch(new URL("/part", location.origin), {cache: "no-store"}); if (r.ok) live.innerHTML = await r.text(); } catch (e) {}
        }, \(refreshSeconds * 1000));
        for (const f of document.querySelectorAll("form.action")) f.addEventListener("submit", async (e) => {
          e.preventDefault();
          const out = f.querySelector(".result"), body = {};
          for (const el of f.elements) {
            if (!el.name || el.value === "") continue;
            body[el.name] = el.type === "number" ? Number(el.value) : el.value;
          }
          out.textContent = "sending...";
          try {
            const r = await fetch(new URL(f.dataset.action, location.origin), {method: "POST", body: JSON.stringify(body), headers: {
              "Authorization": "Bearer " + document.getElementById("action-token").value,
              "Content-Type": "application/json"}});
            const text = (await r.text()).trim();
            out.textContent = text.startsWith(String(r.status)) ? text : r.status + " " + text;
          } catch (err) { out.textContent = "not sent: " + err; }
        });
        </script>

        """
    }
}
