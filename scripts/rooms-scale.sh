#!/usr/bin/env bash
# The rooms scale run (issue 46, docs/rooms-scale.md): GATEWAYS gateway processes (the release binary) replaying,
# at speed 1, generated captures of one site of BEACONS beacons (scripts/rooms-scale-scenario.py, `beaconbridge
# simulate --capture`) through one mosquitto on a free loopback port, rooms on; the leader is killed (SIGKILL:
# the broker publishes its will) KILL_AT seconds into the world. Prints:
#   - the leader's CPU per room report (utime+stime from /proc/PID/stat over a window of the run, divided by the
#     sightings its arbiter took in over that window: rooms_own_sightings + rooms_peer_sightings of its telemetry)
#     and in % of one core; the same for a silent gateway and the broker;
#   - decision latency p50/p95/max: the wall time a `room` decision reached a subscriber less the wall time of
#     the capture moment it was decided at (the replay's clock: capture time + the smallest receive-minus-capture
#     time of the leader's own sightings);
#   - broker messages per second (mosquitto's $SYS counters) and messages dropped;
#   - the handover: kill to the new leader's `leading` log line and to its first decision, its CPU the 15 s after.
# ZONES=N splits the site into N zones (`rooms.zones`, consecutive gateways), one leader each; the zone of
# the first gateway is killed, and every zone's leader (the first gateway of each zone) is measured.
# ONLY_ZONES=K (with ZONES) runs only the first K zones' gateways of the same site: zones share nothing but the
# broker, so one zone of a large site is measured as it runs there, where each gateway is its own device, on a
# machine that cannot replay every gateway of the site at once (the broker then carries only those zones).
# Bounded: the world lasts DURATION s (150), the whole run at most DURATION + 150 s after the captures are
# written. Not part of make test. CPU-heavy: run it under the build lock on a shared machine:
#   flock /tmp/bb-build.lock scripts/rooms-scale.sh          (GATEWAYS=24 BEACONS=1000 DURATION=150 KILL_AT=100)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
GATEWAYS=${GATEWAYS:-24} BEACONS=${BEACONS:-1000} DURATION=${DURATION:-150} KILL_AT=${KILL_AT:-100}
ZONES=${ZONES:-0} ONLY_ZONES=${ONLY_ZONES:-0}
[ "$ONLY_ZONES" -eq 0 ] || [ "$ZONES" -gt 0 ] || { echo "rooms-scale: ONLY_ZONES needs ZONES" >&2; exit 64; }
BIN=${BIN:-$REPO/.build/release/beaconbridge}
[ -x "$BIN" ] || { echo "rooms-scale: build first: swift build -c release --product beaconbridge (or BIN=...)" >&2; exit 1; }
[ "$KILL_AT" -lt "$DURATION" ] || { echo "rooms-scale: KILL_AT must be less than DURATION" >&2; exit 64; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bb-rooms-scale.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -n "${KEEP:-}" ] && echo "kept: $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT

started=$(date +%s)
python3 "$REPO/scripts/rooms-scale-scenario.py" "$GATEWAYS" "$BEACONS" "$DURATION" >"$WORK/scenario.json"
"$BIN" simulate --scenario "$WORK/scenario.json" --capture "$WORK/{gateway}.btsnoop" >"$WORK/truth.jsonl" \
    2>"$WORK/simulate.err"
reports=$(grep -o '[0-9]* advertising report events' "$WORK/simulate.err" | awk '{s += $1} END {print s}')
echo "captures: $GATEWAYS gateways, $BEACONS beacons, ${DURATION} s, $reports advertising reports in all ($(($(date +%s) - started)) s to simulate)"

. "$REPO/scripts/rooms-scale-lib.sh"
scale_broker "$WORK/mosquitto.conf" "sys_interval 1" "max_queued_messages 100000"
port=$PORT
PIDS+=("$BROKER")

ids=$(scale_ids "$WORK/scenario.json")
rooms=$(scale_rooms "$WORK/scenario.json")
zones=""
if [ "$ZONES" -gt 0 ]; then
    zones=$(python3 - "$ZONES" $ids <<'PY'
import sys
n, ids = int(sys.argv[1]), sys.argv[2:]
size = -(-len(ids) // n)
parts = [ids[i:i + size] for i in range(0, len(ids), size)]
print("  zones:")
for k, part in enumerate(parts):
    print("    - {name: z%d, gateways: [%s], rooms: [%s]}" % (k + 1, ", ".join(part), ", ".join("r" + g[3:] for g in part)))
PY
)
fi
first=${ids%% *}
# The gateways that run: every one, or with ONLY_ZONES the first K zones' (consecutive, as the zones are cut).
run_ids=$ids
if [ "$ONLY_ZONES" -gt 0 ]; then
    run_ids=$(echo "$ids" | tr ' ' '\n' | head -n $(( ((GATEWAYS + ZONES - 1) / ZONES) * ONLY_ZONES )) | tr '\n' ' ')
fi
for id in $ids; do
    wait_for=$GATEWAYS
    # In a zone a replay waits for its zone's gateways (the zones start side by side within a second or two).
    [ "$ZONES" -gt 0 ] && wait_for=$(((GATEWAYS + ZONES - 1) / ZONES))
    cat >"$WORK/$id.yaml" <<YAML
gateway: {id: $id}
logging: {level: notice}
telemetry: {enabled: true, interval_s: 5}
tracking: {publish: {sighting_interval_s: 1}}
mqtt: {host: 127.0.0.1, port: $port, reconnect_min_s: 100ms, reconnect_max_s: 500ms}
outbox: {path: $WORK/$id.sqlite}
rooms:
  enabled: true
  gateways: {$rooms}
  replay_wait_for_gateways: $wait_for
  calibration: {enabled: false}
$zones
YAML
done
"$BIN" check-config --config "$WORK/$first.yaml" >/dev/null

# Collectors: every room decision, the measured gateways' own sightings (the replay clock), telemetry, $SYS.
mosquitto_sub -p "$port" -F '%U %t %p' -t 'beaconbridge/rooms/+' -t 'beaconbridge/zones/+/rooms/+' >"$WORK/rooms.log" &
PIDS+=($!)
second=$(echo "$ids" | awk '{print $2}')
# The other zones' leaders (the first gateway of each zone after the first), measured beside gw-01 and gw-02.
leaders=""
if [ "$ZONES" -gt 0 ]; then
    size=$(((GATEWAYS + ZONES - 1) / ZONES))
    leaders=$(echo "$run_ids" | tr ' ' '\n' | awk -v size="$size" 'NR > 1 && (NR - 1) % size == 0' | tr '\n' ' ')
fi
topics=()
for gw in $first $second $leaders; do topics+=(-t "beaconbridge/$gw/sighting/+"); done
mosquitto_sub -p "$port" -F '%U %t %p' "${topics[@]}" >"$WORK/sightings.log" &
PIDS+=($!)
mosquitto_sub -p "$port" -F '%U %t %p' -t 'beaconbridge/+/telemetry' -t 'beaconbridge/+/availability' >"$WORK/telemetry.log" &
PIDS+=($!)
mosquitto_sub -p "$port" -F '%U %t %p' -t '$SYS/broker/messages/#' -t '$SYS/broker/publish/messages/#' \
    -t '$SYS/broker/clients/connected' >"$WORK/sys.log" &
PIDS+=($!)
sleep 0.5

: >"$WORK/pids"
for id in $run_ids; do
    "$BIN" replay "$WORK/$id.btsnoop" --config "$WORK/$id.yaml" --speed 1 >"$WORK/$id.out" 2>"$WORK/$id.err" &
    PIDS+=($!)
    echo "$id $!" >>"$WORK/pids"
done
echo "broker $BROKER" >>"$WORK/pids"
echo "replaying: $(echo $run_ids | wc -w) of $GATEWAYS gateways on port $port, zones $ZONES (running ${ONLY_ZONES:-0} of them; 0: all); the leader $first is killed ${KILL_AT} s into the world"

# The monitor: samples every process's CPU once a second, kills the leader at KILL_AT s of its capture clock,
# and ends when every replay has ended or the bound has passed.
python3 - "$WORK" "$KILL_AT" "$DURATION" <<'PY'
import os, signal, sys, time
work, kill_at, duration = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
start = 1_700_000_000
pids = [line.split() for line in open(work + "/pids")]
first = pids[0][0]
tick = os.sysconf("SC_CLK_TCK")
deadline = time.time() + duration + 150
killed = None
with open(work + "/cpu.log", "w") as out:
    while time.time() < deadline:
        now = time.time()
        alive = 0
        for name, pid in pids:
            try:
                fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    alive += name != "broker"
                out.write("%.3f %s %d\n" % (now, name, int(fields[11]) + int(fields[12])))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
        out.flush()
        if killed is None:
            newest = 0
            try:
                with open(work + "/sightings.log", "rb") as f:
                    f.seek(max(0, os.path.getsize(work + "/sightings.log") - 200000))
                    for line in f.read().decode(errors="replace").splitlines()[1:]:
                        parts = line.split(" ", 2)
                        if len(parts) == 3 and parts[1].startswith("beaconbridge/%s/" % first):
                            at = parts[2].find('"time":')
                            if at >= 0:
                                newest = max(newest, float(parts[2][at + 7:].split(",")[0].split("}")[0]))
            except (OSError, ValueError):
                pass
            if newest >= start + kill_at:
                os.kill(int(pids[0][1]), signal.SIGKILL)
                killed = time.time()
                open(work + "/killed", "w").write("%.3f\n" % killed)
        if alive == 0:
            break
        time.sleep(max(0, 1 - (time.time() - now)))
PY
for id in $run_ids; do
    pid=$(awk -v id="$id" '$1 == id {print $2}' "$WORK/pids")
    kill -TERM "$pid" 2>/dev/null || true
done
sleep 1
python3 - "$WORK" "$KILL_AT" "$DURATION" "$first" "$second" "$ZONES" $leaders <<'PY'
import json, re, sys
work, kill_at, duration, first, second, zones = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
leaders = sys.argv[7:]
measured = [first, second] + leaders
start = 1_700_000_000

def lines(name):
    for line in open(work + "/" + name, errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3:
            yield float(parts[0]), parts[1], parts[2]

def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")

# The replay clock of each measured gateway: wall = capture + offset (its smallest receive - capture).
offset = {}
for wall, topic, payload in lines("sightings.log"):
    gw = topic.split("/")[1]
    m = re.search(r'"time":([0-9.]+)', payload)
    # Only sightings of the world itself: at a capture's end a replay runs its clock on (away timeouts), and
    # the sightings of that run-on carry capture times past the world's end.
    if m and float(m.group(1)) <= start + duration:
        offset[gw] = min(offset.get(gw, 1e18), wall - float(m.group(1)))
killed = float(open(work + "/killed").read()) if __import__("os").path.exists(work + "/killed") else None
decisions = []
for wall, topic, payload in lines("rooms.log"):
    try:
        event = json.loads(payload)
    except ValueError:
        continue
    if event.get("event") != "room" or "time" not in event:
        continue
    decisions.append((wall, event["time"], event.get("gateway"), event.get("room"), topic))
zone_of = (lambda t: t.split("/")[2]) if zones else (lambda t: "-")
measured_zone = None
for wall, t, gw, room, topic in decisions:
    if gw == first:
        measured_zone = zone_of(topic)
        break

def latencies(rows, gw_offset):
    return [wall - (t + gw_offset) for wall, t, gw, room, topic in rows]

for gw in measured:
    mine = [d for d in decisions if d[2] == gw and d[1] <= start + duration - 5]
    if gw in offset and mine:
        lat = latencies(mine, offset[gw])
        warm = latencies([d for d in mine if d[1] >= start + 20], offset[gw])
        print("decisions by %s: %d; latency (report capture -> decision on the broker) p50/p95/max %.2f/%.2f/%.2f s; "
              "after the first 20 s of the world %d decisions, p50/p95/max %.2f/%.2f/%.2f s" % (
                  gw, len(mine), pct(lat, .5), pct(lat, .95), max(lat), len(warm), pct(warm, .5), pct(warm, .95),
                  max(warm) if warm else float("nan")))
    else:
        print("decisions by %s: %d" % (gw, len(mine)))
# How far each measured gateway's own replay fell behind the capture clock (its sightings' arrival, less the least).
for gw in [g for g in measured if g in offset]:
    times = [(wall, float(re.search(r'"time":([0-9.]+)', p).group(1)))
             for wall, topic, p in lines("sightings.log") if topic.split("/")[1] == gw and '"time":' in p]
    lag = [wall - t - offset[gw] for wall, t in times if t <= start + duration]
    if lag:
        print("sightings of %s: %d, arrival behind the replay clock p50/p95/max %.2f/%.2f/%.2f s" % (
            gw, len(lag), pct(lag, .5), pct(lag, .95), max(lag)))
others = sorted(set(d[2] for d in decisions) - set(measured))
print("decisions by other gateways: %s" % (", ".join("%s %d" % (g, sum(1 for d in decisions if d[2] == g)) for g in others) or "none"))

# CPU: samples (wall, name, ticks); telemetry counters (wall, gateway, own + peer sightings).
import os
tick = os.sysconf("SC_CLK_TCK")
cpu = {}
for line in open(work + "/cpu.log"):
    wall, name, ticks = line.split()
    cpu.setdefault(name, []).append((float(wall), int(ticks)))
telemetry = {}
for wall, topic, payload in lines("telemetry.log"):
    if topic.endswith("/telemetry"):
        try:
            counters = json.loads(payload).get("counters", {})
        except ValueError:
            continue
        telemetry.setdefault(topic.split("/")[1], []).append(
            (wall, counters.get("rooms_own_sightings", 0) + counters.get("rooms_peer_sightings", 0),
             counters.get("rooms_inbox_dropped", 0)))
t0 = min((w for w, _ in cpu.get(first, [])), default=0)

def at(series, wall):
    return min(series, key=lambda s: abs(s[0] - wall))

def window_cpu(name, a, b):
    s = cpu.get(name, [])
    if not s:
        return None
    (wa, ca), (wb, cb) = at(s, a), at(s, b)
    return (cb - ca) / tick, wb - wa

end = killed - 2 if killed else t0 + duration
for name in measured:
    series = [s for s in telemetry.get(name, []) if t0 + 30 <= s[0] <= end]
    if len(series) < 2:
        print("%s: too few telemetry messages in the window" % name)
        continue
    (wa, ra, _), (wb, rb, dropped) = series[0], series[-1]
    seconds, span = window_cpu(name, wa, wb)
    print("%s%s: %.1f %% of a core over %.0f s, %d room reports taken in (%.0f/s), %.1f us CPU per report; inbox dropped %d" % (
        name, " (leader)" if name == first else " (leader of its zone)" if name in leaders else " (silent)", 100 * seconds / span, span, rb - ra, (rb - ra) / (wb - wa),
        1e6 * seconds / max(1, rb - ra), dropped))
seconds, span = window_cpu("broker", t0 + 30, end)
print("mosquitto: %.1f %% of a core over the same window" % (100 * seconds / span))
totals = sum(window_cpu(n, t0 + 30, end)[0] for n in cpu if n != "broker" and window_cpu(n, t0 + 30, end))
print("all gateways together: %.2f cores" % (totals / span))

sys_counters = {}
for wall, topic, payload in lines("sys.log"):
    try:
        sys_counters.setdefault(topic, []).append((wall, float(payload)))
    except ValueError:
        pass
for topic in ["$SYS/broker/publish/messages/received", "$SYS/broker/publish/messages/sent",
              "$SYS/broker/messages/received", "$SYS/broker/messages/sent"]:
    s = [x for x in sys_counters.get(topic, []) if t0 + 30 <= x[0] <= end]
    if len(s) >= 2:
        print("broker %s: %.0f/s" % (topic[len("$SYS/broker/"):], (s[-1][1] - s[0][1]) / (s[-1][0] - s[0][0])))
dropped = sys_counters.get("$SYS/broker/publish/messages/dropped", [])
print("broker messages dropped (whole run): %d" % (dropped[-1][1] if dropped else 0))

if killed:
    led = None
    for line in open(work + "/" + second + ".err", errors="replace"):
        if "leading the room decisions" in line and "not leading" not in line:
            m = re.search(r"ts=(\S+)", line)
            if m:
                import datetime
                stamp = m.group(1).strip('"')
                try:
                    led = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
                except ValueError:
                    led = None
    after = [d for d in decisions if d[2] == second and d[0] >= killed]
    first_decision = min((d[0] for d in after), default=None)
    s = cpu.get(second, [])
    before = window_cpu(second, killed - 30, killed)
    per_second = []
    for (wa, ca), (wb, cb) in zip(s, s[1:]):
        if killed <= wa <= killed + 15 and wb > wa:
            per_second.append(100 * (cb - ca) / tick / (wb - wa))
    print("handover: the new leader %s led %s after the kill, its first decision %s after; CPU %.1f %% of a core the 30 s before, "
          "at most %.1f %% in a second of the 15 s after (%d decisions by it after the kill)" % (
              second, "%.2f s" % (led - killed) if led else "(no log line)",
              "%.2f s" % (first_decision - killed) if first_decision else "(none)",
              100 * before[0] / before[1] if before else float("nan"), max(per_second, default=float("nan")), len(after)))
PY
echo "rooms-scale: $(($(date +%s) - started)) s in all"
