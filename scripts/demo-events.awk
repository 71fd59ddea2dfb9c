# Formats `mosquitto_sub -v` output (one "TOPIC PAYLOAD" line per message) of BeaconBridge events as one
# readable line per event, and prints a summary by kind at the end of input. Plain POSIX awk (mawk on
# Debian), no jq. Variables: names = file of "beacon_id name" lines; start = capture time of second 0.

function field(json, key,    pattern, value) {
    # The first "key":value in the payload (string or number); "" when absent.
    pattern = "\"" key "\":(\"[^\"]*\"|-?[0-9.eE+-]+|null|true|false)"
    if (!match(json, pattern)) return ""
    value = substr(json, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/^"|"$/, "", value)
    return value
}

function who(id) { return (id in name) ? name[id] : id }

function clock(t,    s) {
    if (t == "" || start == "") return "        "
    s = int(t - start + 0.5)
    return sprintf("t=%4ds ", s)
}

function metres(d) { return (d == "" || d == "null") ? "" : sprintf("%.1f m", d) }

BEGIN {
    if (names != "") {
        while ((getline line < names) > 0) {
            split(line, parts, " ")
            name[parts[1]] = substr(line, length(parts[1]) + 2)
        }
        close(names)
    }
    total = 0
}

{
    topic = $1
    payload = substr($0, length(topic) + 2)
    n = split(topic, level, "/")
    total++
    if (level[1] == "homeassistant") {
        count["discovery config"]++
        next
    }
    if (level[n] == "availability") {
        count["availability"]++
        printf "%s %-10s gateway %s is %s\n", clock(""), "gateway", level[2], payload
        fflush()
        next
    }
    kind = field(payload, "kind")
    t = field(payload, "time")
    if (kind == "region") {
        ev = field(payload, "event")
        count["region " ev]++
        printf "%s %-10s %-6s %-8s %-8s %s\n", clock(t), "region", ev, level[4], who(field(payload, "beacon_id")), \
            metres(field(payload, "distance"))
    } else if (kind == "presence") {
        state = field(payload, "state")
        count["presence " state]++
        printf "%s %-10s %-6s %-8s %-8s %s\n", clock(t), "presence", state, "", who(field(payload, "beacon_id")), \
            metres(field(payload, "distance"))
    } else if (kind == "sighting") {
        count["sighting"]++
        printf "%s %-10s %-6s %-8s %-8s %-7s rssi %s\n", clock(t), "sighting", "", "", who(field(payload, "beacon_id")), \
            metres(field(payload, "distance")), field(payload, "rssi")
    } else if (kind == "telemetry") {
        count["telemetry"]++
        printf "%s %-10s %s reports, %s beacons tracked, RSS %.1f MB\n", clock(t), "telemetry", field(payload, "reports"), \
            field(payload, "tracked_beacons"), field(payload, "rss_bytes") / 1048576
    } else {
        count["other"]++
        printf "%s %-10s %s\n", clock(t), "other", topic
    }
    fflush()
}

END {
    printf "\n%d MQTT messages received:\n", total
    for (k in count) printf "  %-20s %d\n", k, count[k] | "sort"
    close("sort")
}
