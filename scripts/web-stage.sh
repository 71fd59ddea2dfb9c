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
#   - the same page loaded by Debian's headless `chromium` (the browser's Basic login with the token, scripts run):
#     its DOM lists the beacons and the outbox figure and never the token; its screenshot at a phone's width is
#     kept as .build/web-stage/status-page.png (docs/images/status-page.png is a copy of one).
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
for p in prometheus mosquitto curl python3 chromium; do
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
chmod 600 "$WORK/http.token"
cat > "$WORK/beaconbridge.yaml" << YAML
gateway:
  id: web-stage
telemetry:
  interval_s: 5
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
# The browser: the DOM after the page's script ran, and a screenshot at a phone's width. The token goes in as the
# Basic password in the URL (the user name is ignored), so the browser sends an Authorization header as a person's
# login would.
browser_url="http://viewer:$(cat "$WORK/http.token")@127.0.0.1:$HTTP_PORT/"
CHROMIUM_FLAGS=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars
    --user-data-dir="$WORK/chromium" --virtual-time-budget=3000)
timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --dump-dom "$browser_url" > "$WORK/dom.html" 2> "$WORK/chromium.log"
browser_code=$?
mkdir -p "$REPO/.build/web-stage"
timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --window-size=412,1400 --screenshot="$REPO/.build/web-stage/status-page.png" \
    "$browser_url" >> "$WORK/chromium.log" 2>&1
shot_code=$?
browser_listed=$(grep -o '<tr class="beacon">' "$WORK/dom.html" | wc -l)
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
    grep -q 'id="outbox-mqtt"' "$WORK/dom.html" && ! grep -qF "$(cat "$WORK/http.token")" "$WORK/dom.html"; then
    pass "chromium: the DOM lists $browser_listed beacons and the outbox figure, and not the token"
else
    fail "chromium: exit $browser_code, $browser_listed beacons in the DOM (the replay has '$replay_beacons')"
    tail -5 "$WORK/chromium.log" >&2
fi
if [ "$shot_code" = 0 ] && [ -s "$REPO/.build/web-stage/status-page.png" ]; then
    pass "chromium: screenshot .build/web-stage/status-page.png ($(stat -c %s "$REPO/.build/web-stage/status-page.png") bytes)"
else
    fail "chromium: no screenshot (exit $shot_code)"
fi
if [ "$failed" -gt 0 ]; then
    log "gateway log:"
    tail -20 "$WORK/beaconbridge.log" >&2
    tail -20 "$WORK/prometheus.log" >&2
fi
echo "web-stage: $passed passed, $failed failed in $(elapsed "$stage_start") s"
[ "$failed" = 0 ]
