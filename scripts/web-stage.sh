#!/usr/bin/env bash
# The web stage (docs/testing.md, docs/status-page.md): a real Prometheus scrapes a gateway that replays a capture.
# The release binary of the `release` stage (not rebuilt) replays the demo story (config/scenarios/demo.json
# simulated to a btsnoop capture, as `make demo`) at speed 8 to a mosquitto on a free loopback port, with `http:` on
# another free loopback port and a read token; Debian's `prometheus` (its own storage in a temporary directory, a free
# loopback port, the token as `authorization: credentials_file`) scrapes it every second. Checks, one PASS or FAIL
# line each, through Prometheus' HTTP query API (/api/v1/query):
#   - the target is up (`up{job="beaconbridge"} == 1`);
#   - `beaconbridge_reports_total` arrived, is non-zero and at most the capture's reports (1,624);
#   - `max_over_time(beaconbridge_beacons_tracked[10m])` equals the beacons the replay has (3, the log's `beacons=`);
#   - `process_resident_memory_bytes` and `process_cpu_seconds_total` arrived and are plausible (1-200 MB; > 0);
#   - the replay ended with exit 0 (everything delivered);
#   - the status page, read with curl during the replay, lists its beacons and shows the outbox figure;
#   - the same page in Debian's headless `chromium`, driven through the DevTools protocol by scripts/web-driver.py
#     (Python's standard library only; the browser's Basic login with the read token): a training of the room `lab`
#     is started from the page (the form filled, Start pressed with the mouse) and answered 202, its progress and
#     its `done` reply are read from the page as its own refresh shows them; the DOM shows a beacon's room with the
#     rooms' probabilities (the site's two fingerprints, `lab` and `hall`, are retained on the broker before the
#     gateway starts, and `rooms.fingerprint_classifier` is on), RSSI plots, the beacons and the outbox figure, and
#     never a token; its screenshot at a phone's width is kept as .build/web-stage/status-page.png
#     (docs/images/status-page.png is a copy of one).
# Prints the figures and the stage's time; exit 0 only when every check passed. Bounded: every wait has a limit and
# the whole stage takes about a minute.
# Usage: scripts/web-stage.sh [BIN]   (default .build/release/beaconbridge)
# Environment: WEB_STAGE_KEEP=1 keeps the run directory.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$REPO/.build/release/beaconbridge}
stage_start=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '[web-stage %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

[ -x "$BIN" ] || { echo "FAIL web-stage: $BIN is missing (the release stage builds it)"; exit 1; }
missing=""
for p in prometheus mosquitto mosquitto-clients curl python3 chromium; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    log "installing:$missing"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
        -o DPkg::Lock::Timeout=600 --no-install-recommends $missing; } > /dev/null 2>&1 ||
        { echo "FAIL web-stage: cannot install$missing"; exit 1; }
fi
PROMETHEUS=$(command -v prometheus || echo /usr/bin/prometheus)
MOSQUITTO=$(command -v mosquitto || echo /usr/sbin/mosquitto)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-web-stage.XXXXXX")
PIDS=()
stop_pid() {
    kill "$1" 2> /dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$1" 2> /dev/null || break
        sleep 0.1
    done
    kill -9 "$1" 2> /dev/null || true
    wait "$1" 2> /dev/null || true
}
cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    if [ "${WEB_STAGE_KEEP:-0}" = 1 ]; then log "files kept in $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
free_port() {
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
wait_port() {
    for _ in $(seq "$2"); do
        (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null && return 0
        sleep 0.1
    done
    return 1
}
MQTT_PORT=$(free_port) || { echo "FAIL web-stage: no free loopback port"; exit 1; }
HTTP_PORT=$(free_port) || { echo "FAIL web-stage: no free loopback port"; exit 1; }
PROM_PORT=$(free_port) || { echo "FAIL web-stage: no free loopback port"; exit 1; }
DEVTOOLS_PORT=$(free_port) || { echo "FAIL web-stage: no free loopback port"; exit 1; }

cat > "$WORK/mosquitto.conf" << CONF
user $(id -un)
listener $MQTT_PORT 127.0.0.1
allow_anonymous true
persistence false
log_dest file $WORK/mosquitto.log
CONF
"$MOSQUITTO" -c "$WORK/mosquitto.conf" > /dev/null 2>&1 &
PIDS+=($!)
wait_port "$MQTT_PORT" 100 || { echo "FAIL web-stage: mosquitto did not start"; exit 1; }

"$BIN" simulate --scenario "$REPO/config/scenarios/demo.json" --summary-only --capture "$WORK/demo.btsnoop" \
    2> "$WORK/simulate.txt" > /dev/null || { echo "FAIL web-stage: simulate failed"; exit 1; }
capture_reports=$(sed -n 's/^capture: .*: \([0-9]*\) advertising report events.*/\1/p' "$WORK/simulate.txt")
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/http.token"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/http-action.token"
chmod 600 "$WORK/http.token" "$WORK/http-action.token"
KEYS=ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1
cat > "$WORK/beaconbridge.yaml" << YAML
gateway:
  id: web-stage
  room: lab
telemetry:
  interval_s: 5
regions:
  - name: desk
    match: {format: ibeacon, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 1, minor: 1}
    enter: {rssi_above: -70}
  - name: office
    match: {format: ibeacon, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 2}
    enter: {rssi_above: -78}
beacons:
  - id: $KEYS
    name: Keys
rooms:
  enabled: true
  gateways: {web-stage: lab, gw-b: hall}
  leader_settle_s: 0.5
  fingerprint_classifier: true
mqtt:
  host: 127.0.0.1
  port: $MQTT_PORT
outbox:
  path: $WORK/outbox.sqlite
http:
  enabled: true
  listen: 127.0.0.1
  port: $HTTP_PORT
  token_file: $WORK/http.token
  action_token_file: $WORK/http-action.token
YAML
"$BIN" check-config --config "$WORK/beaconbridge.yaml" > "$WORK/check-config.txt" 2>&1 ||
    { cat "$WORK/check-config.txt"; echo "FAIL web-stage: check-config refused the configuration"; exit 1; }

mkdir -p "$WORK/prometheus"
cat > "$WORK/prometheus.yml" << PROM
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: beaconbridge
    authorization:
      type: Bearer
      credentials_file: $WORK/http.token
    static_configs:
      - targets: ['127.0.0.1:$HTTP_PORT']
PROM
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prometheus" \
    --web.listen-address="127.0.0.1:$PROM_PORT" > "$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_port "$PROM_PORT" 300 || { tail -20 "$WORK/prometheus.log"; echo "FAIL web-stage: prometheus did not start"; exit 1; }
log "mosquitto :$MQTT_PORT, gateway http :$HTTP_PORT, prometheus :$PROM_PORT"

# The site's two rooms trained before the gateway starts (retained, as a gateway that trained them publishes them):
# with both, the classifier decides and the page shows each beacon's probabilities.
fingerprint() {
    printf '{"kind":"fingerprint","room":"%s","gateway":"web-stage","recorded":1699999000,"seconds":60,"walks":1,"quality":4,"gateways":[%s]}' "$1" "$2"
}
mosquitto_pub -h 127.0.0.1 -p "$MQTT_PORT" -q 1 -r -t beaconbridge/rooms/fingerprint/lab -m "$(fingerprint lab \
    '{"gateway":"web-stage","mean_db":-62,"spread_db":5,"samples":60,"heard_share":1}')" &&
    mosquitto_pub -h 127.0.0.1 -p "$MQTT_PORT" -q 1 -r -t beaconbridge/rooms/fingerprint/hall -m "$(fingerprint hall \
        '{"gateway":"web-stage","mean_db":-85,"spread_db":5,"samples":60,"heard_share":0.6},{"gateway":"gw-b","mean_db":-58,"spread_db":5,"samples":60,"heard_share":1}')" ||
    { echo "FAIL web-stage: cannot publish the fingerprints"; exit 1; }

replay_start=$(date +%s.%N)
"$BIN" replay "$WORK/demo.btsnoop" --config "$WORK/beaconbridge.yaml" --speed 8 2> "$WORK/beaconbridge.log" &
GATEWAY=$!
PIDS+=("$GATEWAY")
# The page, read while the replay runs (after 10 s): the first view starts the loop's copy of the beacons, the
# second, two seconds later, lists them.
sleep 10
curl -sf --max-time 5 -H "Authorization: Bearer $(cat "$WORK/http.token")" "http://127.0.0.1:$HTTP_PORT/" > /dev/null
sleep 2
curl -sf --max-time 5 -H "Authorization: Bearer $(cat "$WORK/http.token")" "http://127.0.0.1:$HTTP_PORT/" \
    > "$WORK/page.html"
listed=$(grep -o '<tr class="beacon">' "$WORK/page.html" | wc -l)
# The browser, driven through the DevTools protocol (scripts/web-driver.py): a training started from the page and
# its progress read there, a room with probabilities, the DOM and a screenshot at a phone's width.
mkdir -p "$REPO/.build/web-stage"
chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars \
    --user-data-dir="$WORK/chromium" --remote-debugging-address=127.0.0.1 --remote-debugging-port="$DEVTOOLS_PORT" \
    about:blank > "$WORK/chromium.log" 2>&1 &
CHROMIUM=$!
PIDS+=("$CHROMIUM")
browser_start=$(date +%s.%N)
timeout 100 python3 "$REPO/scripts/web-driver.py" "$DEVTOOLS_PORT" "http://127.0.0.1:$HTTP_PORT/" "$WORK/http.token" \
    "$WORK/http-action.token" lab "$KEYS" 60 "$WORK/dom.html" "$REPO/.build/web-stage/status-page.png" \
    > "$WORK/driver.txt" 2> "$WORK/driver.log"
browser_code=$?
browser_seconds=$(elapsed "$browser_start")
stop_pid "$CHROMIUM"
finding() { sed -n "s/^$1=//p" "$WORK/driver.txt" | head -1; }
browser_listed=$(grep -o '<tr class="beacon">' "$WORK/dom.html" 2> /dev/null | wc -l)
# The replay takes about 40 s; at most 120.
for _ in $(seq 1200); do
    kill -0 "$GATEWAY" 2> /dev/null || break
    sleep 0.1
done
if kill -0 "$GATEWAY" 2> /dev/null; then
    fail "replay: still running after 120 s"
    stop_pid "$GATEWAY"
else
    wait "$GATEWAY"
    code=$?
    if [ "$code" = 0 ]; then pass "replay: exit 0 in $(elapsed "$replay_start") s"; else fail "replay: exit $code"; fi
fi
replay_beacons=$(sed -n 's/.*msg="capture replayed".* beacons=\([0-9]*\).*/\1/p' "$WORK/beaconbridge.log")

# One value of an instant query ("" when there is none).
query() {
    curl -sf --max-time 5 -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
        python3 -c 'import json, sys
d = json.load(sys.stdin)
r = d.get("data", {}).get("result", [])
print(r[0]["value"][1] if d.get("status") == "success" and r else "")' 2> /dev/null
}
up=$(query 'max_over_time(up{job="beaconbridge"}[10m])')
reports=$(query 'max_over_time(beaconbridge_reports_total[10m])')
tracked=$(query 'max_over_time(beaconbridge_beacons_tracked[10m])')
rss=$(query 'max_over_time(process_resident_memory_bytes[10m])')
cpu=$(query 'max_over_time(process_cpu_seconds_total[10m])')
scrapes=$(query 'count_over_time(beaconbridge_reports_total[10m])')
echo "web-stage figures: scrapes $scrapes, reports $reports of the capture's $capture_reports, beacons tracked $tracked" \
    "(the replay's $replay_beacons), RSS ${rss:-?} bytes, CPU ${cpu:-?} s"
[ "$up" = 1 ] && pass "prometheus: the target was up" || fail "prometheus: the target was never up (up=$up)"
if [ -n "$reports" ] && [ "$reports" -gt 0 ] 2> /dev/null && [ "$reports" -le "${capture_reports:-0}" ]; then
    pass "prometheus: beaconbridge_reports_total $reports (0 < it <= $capture_reports)"
else
    fail "prometheus: beaconbridge_reports_total '$reports' (expected 1-$capture_reports)"
fi
if [ -n "$tracked" ] && [ "$tracked" = "$replay_beacons" ]; then
    pass "prometheus: beaconbridge_beacons_tracked reached $tracked, the replay's beacons"
else
    fail "prometheus: beaconbridge_beacons_tracked '$tracked', the replay has '$replay_beacons'"
fi
if [ -n "$rss" ] && python3 -c "import sys; sys.exit(0 if 1e6 <= float('$rss') <= 2e8 and float('${cpu:-0}') > 0 else 1)"; then
    pass "prometheus: process_resident_memory_bytes $rss, process_cpu_seconds_total $cpu"
else
    fail "prometheus: process figures RSS '$rss' CPU '$cpu'"
fi
if [ "$listed" = "$replay_beacons" ] && grep -q 'id="outbox-mqtt"' "$WORK/page.html"; then
    pass "page: $listed beacons listed (the replay's $replay_beacons), the outbox figure shown"
else
    fail "page: $listed beacons listed, the replay has '$replay_beacons'"
fi
if [ "$browser_code" = 0 ] && [ "$browser_listed" -gt 0 ] && [ "$browser_listed" = "$replay_beacons" ] &&
    grep -q 'id="outbox-mqtt"' "$WORK/dom.html" && ! grep -qF "$(cat "$WORK/http.token")" "$WORK/dom.html" &&
    ! grep -qF "$(cat "$WORK/http-action.token")" "$WORK/dom.html"; then
    pass "chromium: the DOM lists $browser_listed beacons ($(finding rssi_plots) RSSI plots) and the outbox figure, and no token"
else
    fail "chromium: exit $browser_code, $browser_listed beacons in the DOM (the replay has '$replay_beacons')"
    tail -5 "$WORK/driver.log" "$WORK/chromium.log" >&2
fi
answer=$(finding answer)
progress=$(finding progress)
done_reply=$(finding done)
if [[ "$answer" == 202* ]] && [ -n "$progress" ] && [[ "$done_reply" == *'"state":"done"'* ]]; then
    pass "chromium: a training started from the page (answer '${answer:0:40}...'), progress seen at ${progress} %, then done"
else
    fail "chromium: training from the page: answer '$answer', progress '$progress', done '$done_reply'"
    cat "$WORK/driver.txt" >&2
fi
room=$(finding room)
if [ -n "$room" ]; then
    pass "chromium: a beacon's room with probabilities in the DOM: $room"
else
    fail "chromium: no room with probabilities in the DOM"
fi
if [ -s "$REPO/.build/web-stage/status-page.png" ] && [ -n "$(finding screenshot)" ]; then
    pass "chromium: screenshot .build/web-stage/status-page.png ($(finding screenshot) bytes); the browser part took $browser_seconds s"
else
    fail "chromium: no screenshot"
fi
if [ "$failed" -gt 0 ]; then
    log "gateway log:"
    tail -20 "$WORK/beaconbridge.log" >&2
    tail -20 "$WORK/prometheus.log" >&2
fi
echo "web-stage: $passed passed, $failed failed in $(elapsed "$stage_start") s"
[ "$failed" = 0 ]
