#!/usr/bin/env bash
# The container stage (docs/testing.md, "The container stage"): the image of docker/Containerfile built from the
# Debian package (scripts/container-image.sh, over the slim Debian 12 root of scripts/container-root.sh) and run
# with rootful podman as docker/compose.yaml runs it: host network, every capability dropped, a read-only root.
# Checks, one PASS or FAIL line each:
#   - the image says the package's version, and check-config passes on its example configuration (ENTRYPOINT, the
#     BEACONBRIDGE_CONFIG default, the state directory);
#   - the demo story of `make demo` (config/scenarios/demo.json simulated to a btsnoop capture, the configuration of
#     scripts/demo-config.sh) replayed by the container, with the capture and the configuration mounted read-only
#     and the outbox in a mounted state directory, publishes the same messages to its mosquitto as the same package's
#     binary replaying the same capture on the host to another mosquitto, at the same time: every message but
#     telemetry (its figures are the process's own), by topic and payload less the event's id and seq (numbered
#     by each outbox), in order per topic;
#   - `podman stop` (the image's STOPSIGNAL, SIGTERM) of a replay at real speed: at once after the start it ends
#     within 5 s (tini, the image's PID 1, hands the signal on), and once the replay runs it stops with exit 0
#     after it published offline;
#   - `run`, the image's default command, with compose's two capabilities and the configuration mounted where
#     compose mounts it: it reads that file and starts the scanner. On a kernel without Bluetooth (the VMs this
#     runs on) that ends in "the kernel has no Bluetooth support", which passes; a permission error fails;
#   - docker/compose.yaml's gateway service brought up by podman-compose (pinned, from PyPI, in a cached virtual
#     environment in BB_CACHE; the check is skipped, and says so, where PyPI cannot be reached): host network,
#     exactly NET_ADMIN and NET_RAW, read-only root, no-new-privileges, and the gateway gets to its scanner.
# Prints the image's size and the stage's times; exit 0 only when every check passed.
# Usage: scripts/container-stage.sh
# Environment: DEB_BIN (the release binary to package when no package is there; default .build/release/beaconbridge,
# built by scripts/deb.sh only when missing), CONTAINER_STAGE_DEB (an already built package), CONTAINER_STAGE_SPEED
# (the replay's speed, default 8 as `make demo`), CONTAINER_STAGE_KEEP=1 (keep the run directory), BB_CACHE (the
# podman-compose environment's directory, default /var/cache/beaconbridge).
# The package: CONTAINER_STAGE_DEB, else .build/deb/beaconbridge_<version>_<arch>.deb when it is newer than DEB_BIN
# (in `make test` the systemd stage has just made it from the same binary), else made by scripts/deb.sh from DEB_BIN.
# Prints "SKIP container-stage: <reason>" and exits 0 only where podman cannot run a container (not root: the image's
# root needs debootstrap and rootful storage; or podman itself fails).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=demo-config.sh
. "$REPO/scripts/demo-config.sh"
# shellcheck source=container-lib.sh
. "$REPO/scripts/container-lib.sh"
SPEED=${CONTAINER_STAGE_SPEED:-8}
BB_CACHE=${BB_CACHE:-/var/cache/beaconbridge}
stage_start=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }'; }
log() { printf '[container-stage %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; echo "FAIL container-stage: $*"; exit 1; }
passed=0
failed=0
pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

if [ "$(id -u)" != 0 ]; then
    echo "SKIP container-stage: needs root (debootstrap of the image's root, rootful podman) and this is $(id -un)"
    exit 0
fi
missing=""
for p in podman buildah debootstrap mosquitto mosquitto-clients; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    log "installing:$missing"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        --no-install-recommends $missing > /dev/null; } || die "could not install$missing"
fi
RUN=$(mktemp -d "${TMPDIR:-/tmp}/bb-container-stage.XXXXXX")
CONTAINERS=()
PIDS=()
cleanup() {
    local c p
    for c in "${CONTAINERS[@]}"; do podman rm -f -t 0 "$c" > /dev/null 2>&1; done
    for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
    if [ -n "${CONTAINER_STAGE_KEEP:-}" ]; then log "kept $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
container_engine_conf "$RUN" > "$RUN/engine.txt" || die "could not install runc"
[ -s "$RUN/engine.txt" ] && log "podman and buildah: $(paste -sd ';' "$RUN/engine.txt" | sed 's/;/; /g')"
if ! podman_info=$(timeout 60 podman info --format '{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}' 2>&1); then
    echo "SKIP container-stage: podman cannot run here: $(echo "$podman_info" | tail -n 1)"
    exit 0
fi

# 1. The package, then the image.
t=$(date +%s.%N)
DEB_BIN=${DEB_BIN:-$REPO/.build/release/beaconbridge}
deb=${CONTAINER_STAGE_DEB:-}
if [ -z "$deb" ] && [ -x "$DEB_BIN" ]; then
    candidate="$REPO/.build/deb/beaconbridge_$("$DEB_BIN" --version | awk '{ print $2 }')_$(dpkg --print-architecture).deb"
    if [ -f "$candidate" ] && [ "$candidate" -nt "$DEB_BIN" ]; then
        deb=$candidate
        log "the package of this binary is there: $(basename "$deb")"
    else
        deb=$(DEB_OUT="$REPO/.build/deb" DEB_BIN="$DEB_BIN" "$REPO/scripts/deb.sh" | tail -n 1) || die "scripts/deb.sh failed"
    fi
elif [ -z "$deb" ]; then
    log "no release binary at $DEB_BIN: scripts/deb.sh builds one"
    deb=$(DEB_OUT="$REPO/.build/deb" "$REPO/scripts/deb.sh" | tail -n 1) || die "scripts/deb.sh failed"
fi
[ -f "$deb" ] || die "no package at $deb"
version=$(dpkg-deb -f "$deb" Version)
package_seconds=$(elapsed "$t")
t=$(date +%s.%N)
image=$("$REPO/scripts/container-image.sh" "$deb" 2> "$RUN/image.log" | tail -n 1) \
    || { cat "$RUN/image.log" >&2; die "the image was not built (scripts/container-image.sh, log above)"; }
image_seconds=$(elapsed "$t")
cat "$RUN/image.log" >&2
size=$(podman image inspect --format '{{.Size}}' "$image") || die "podman does not see $image"
echo "container-stage: image $image, $(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }') ($size bytes), built in $image_seconds s"

# The same package's binary on the host, for the capture and the reference replay.
dpkg-deb -x "$deb" "$RUN/deb" || die "dpkg-deb -x $deb failed"
BIN="$RUN/deb/usr/bin/beaconbridge"

# podman can run a container at all? (A program of the image's root, not beaconbridge: podman's own failure, exit
# 125, or the OCI runtime's, 126 with "OCI" in the message, is the SKIP; anything else is the image's and fails below.)
probe_status=0
timeout 120 podman run --rm --network host --entrypoint /bin/true "$image" > "$RUN/probe.log" 2>&1 || probe_status=$?
if [ "$probe_status" = 125 ] || { [ "$probe_status" = 126 ] && grep -q OCI "$RUN/probe.log"; }; then
    echo "SKIP container-stage: podman cannot start a container here: $(tail -n 1 "$RUN/probe.log")"
    exit 0
fi

# The options docker/compose.yaml gives the gateway: host network, a read-only root, no new privileges, /tmp on a
# tmpfs. Every capability is dropped (a replay needs none; `run` below adds compose's two).
COMMON=(--network host --read-only --security-opt no-new-privileges --tmpfs /tmp)

# 2. The image's own metadata and configuration.
out=$(timeout 60 podman run --rm "${COMMON[@]}" --cap-drop ALL "$image" --version 2>&1)
if [ "$out" = "beaconbridge $version" ]; then pass "podman run $image --version: $out"
else fail "podman run $image --version: '$out', expected 'beaconbridge $version'"; fi
mkdir -p "$RUN/state-check"
if out=$(timeout 60 podman run --rm "${COMMON[@]}" --cap-drop ALL -v "$RUN/state-check:/var/lib/beaconbridge" \
    "$image" check-config 2>&1); then
    pass "check-config of the image's example configuration (\$BEACONBRIDGE_CONFIG): $(echo "$out" | head -n 1)"
else fail "check-config of the image's example configuration: $(echo "$out" | tail -n 3 | tr '\n' ' ')"; fi

# 3. The demo story: capture, two brokers, two subscribers, the host's and the container's replay side by side.
t=$(date +%s.%N)
mkdir -p "$RUN/story" "$RUN/host" "$RUN/state"
"$BIN" simulate --scenario "$REPO/config/scenarios/demo.json" --summary-only --capture "$RUN/story/demo.btsnoop" \
    > /dev/null 2> "$RUN/simulate.log" || die "simulate --capture failed: $(tail -n 3 "$RUN/simulate.log")"
free_port() { # a loopback port nothing listens on, other than $1
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        [ "$port" != "${1:-}" ] || continue
        if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
start_broker() { # NAME PORT
    printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest file %s\n' \
        "$(id -un)" "$2" "$RUN/$1-mosquitto.log" > "$RUN/$1-mosquitto.conf"
    mosquitto -c "$RUN/$1-mosquitto.conf" > /dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do (exec 3<> "/dev/tcp/127.0.0.1/$2") 2> /dev/null && return 0; sleep 0.1; done
    return 1
}
host_port=$(free_port) && ctr_port=$(free_port "$host_port") || die "no free loopback port"
start_broker host "$host_port" || die "mosquitto on $host_port did not start: $(tail -n 3 "$RUN/host-mosquitto.log")"
start_broker container "$ctr_port" || die "mosquitto on $ctr_port did not start: $(tail -n 3 "$RUN/container-mosquitto.log")"
for side in host container; do
    port=$host_port; [ "$side" = container ] && port=$ctr_port
    stdbuf -oL mosquitto_sub -h 127.0.0.1 -p "$port" -v -t 'beaconbridge/#' -t 'homeassistant/#' > "$RUN/$side.mqtt" 2>&1 &
    PIDS+=($!)
    subscribers="${subscribers:-} $!"
done
# The configuration as each gateway sees it: the container's outbox in its state directory (a mounted volume).
demo_config "$host_port" "$RUN/host/outbox.sqlite" > "$RUN/host/beaconbridge.yaml"
demo_config "$ctr_port" /var/lib/beaconbridge/outbox.sqlite > "$RUN/story/beaconbridge.yaml"
sleep 0.5
# Both replays at the demo's speed, at the same time (about 40 s); each bounded by timeout (at most 4 times as long).
limit=$((300 * 4 / SPEED + 60))
timeout "$limit" "$BIN" replay "$RUN/story/demo.btsnoop" --config "$RUN/host/beaconbridge.yaml" --speed "$SPEED" \
    2> "$RUN/host-replay.log" &
host_replay=$!
PIDS+=("$host_replay")
CONTAINERS+=(bb-stage-replay-$$)
timeout "$limit" podman run --rm --name "bb-stage-replay-$$" "${COMMON[@]}" --cap-drop ALL \
    -v "$RUN/story:/story:ro" -v "$RUN/state:/var/lib/beaconbridge" \
    "$image" replay /story/demo.btsnoop --config /story/beaconbridge.yaml --speed "$SPEED" 2> "$RUN/container-replay.log"
ctr_status=$?
host_status=0
wait "$host_replay" || host_status=$?
sleep 1   # the last messages reach the subscribers
replay_seconds=$(elapsed "$t")
for p in $subscribers; do kill "$p" 2> /dev/null; done
# The messages to compare: every one but telemetry (RSS, CPU and counters of its own process), topic and payload
# without the event's id and seq (each outbox numbers its own), grouped by topic in arrival order.
messages() { grep -v '"kind":"telemetry"' "$1" | sed -e 's/"id":"[^"]*",//' -e 's/"seq":[0-9]*,//' | sort -s -k1,1; }
messages "$RUN/host.mqtt" > "$RUN/host.compare"
messages "$RUN/container.mqtt" > "$RUN/container.compare"
kinds() { # "N kind" lines: discovery, availability and each event kind
    awk '{ if ($1 ~ /^homeassistant\//) k = "discovery"; else if ($1 ~ /\/availability$/) k = "availability";
           else if (match($0, /"kind":"[a-z_]*"/)) k = substr($0, RSTART + 8, RLENGTH - 9); else k = "other"; n[k]++ }
         END { for (k in n) printf "%s %d\n", k, n[k] }' "$1" | sort | paste -sd ' ' | sed 's/ \([0-9]\)/=\1/g'
}
regions=$(grep -c '"kind":"region"' "$RUN/container.compare")
if [ "$ctr_status" != 0 ]; then
    fail "the container's replay exited $ctr_status: $(tail -n 3 "$RUN/container-replay.log" | tr '\n' ' ')"
elif [ "$host_status" != 0 ]; then
    fail "the host's replay exited $host_status: $(tail -n 3 "$RUN/host-replay.log" | tr '\n' ' ')"
elif [ "$regions" = 0 ]; then
    fail "the container published no region event ($(wc -l < "$RUN/container.mqtt") messages)"
elif ! diff -u "$RUN/host.compare" "$RUN/container.compare" > "$RUN/replay.diff"; then
    fail "the container's messages differ from the host's ($(grep -c '^-[^-]' "$RUN/replay.diff") only on the host, $(grep -c '^+[^+]' "$RUN/replay.diff") only in the container; the diff: $RUN/replay.diff)"
    echo "  host:      $(kinds "$RUN/host.compare")"
    echo "  container: $(kinds "$RUN/container.compare")"
    grep '^[-+][^-+]' "$RUN/replay.diff" | head -n 10 | cut -c1-150 | sed 's/^/  /'

else
    pass "the demo story replayed in the container at speed $SPEED: $(wc -l < "$RUN/container.compare") messages as the host's replay ($(kinds "$RUN/container.compare"); telemetry $(grep -c '"kind":"telemetry"' "$RUN/container.mqtt") and $(grep -c '"kind":"telemetry"' "$RUN/host.mqtt") not compared), in $replay_seconds s"
fi
if [ -s "$RUN/state/outbox.sqlite" ]; then
    pass "the outbox lives in the mounted state directory ($(stat -c %s "$RUN/state/outbox.sqlite") bytes)"
else fail "no outbox.sqlite in the mounted state directory"; fi

# 4. `podman stop` of a replay at real speed (the story lasts 300 s), twice. First at once after `podman run`, in
# the daemon's start-up, before it handles SIGTERM: tini, the image's PID 1, hands SIGTERM on and the daemon ends
# (143) or, with its handler in place already, stops (0); either within seconds. (A PID 1 without a handler for a
# signal never gets it: with the daemon as PID 1 a stop right after the start waited out the 15 s and ended in
# SIGKILL, 137, once in about ten runs here, under load.) Then after the container's own `online` and an event after it: SIGTERM, offline, 0.
t=$(date +%s.%N)
mkdir -p "$RUN/state-stop" "$RUN/state-run"
stop_replay() { # NAME: starts a replay at speed 1 in container NAME, or fails
    CONTAINERS+=("$1")
    timeout 60 podman run -d --name "$1" "${COMMON[@]}" --cap-drop ALL \
        -v "$RUN/story:/story:ro" -v "$RUN/state-stop:/var/lib/beaconbridge" \
        "$image" replay /story/demo.btsnoop --config /story/beaconbridge.yaml --speed 1 > /dev/null 2> "$RUN/$1.start" \
        || { fail "podman run -d of a replay failed: $(tail -n 3 "$RUN/$1.start" | tr '\n' ' ')"; return 1; }
}
podman_stop() { # NAME: podman stop with compose's grace time; sets stop_seconds, stop_status, writes RUN/NAME.log
    local s
    s=$(date +%s.%N)
    timeout 60 podman stop -t 15 "$1" > /dev/null 2>&1
    stop_seconds=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    stop_status=$(podman inspect --format '{{.State.ExitCode}}' "$1" 2> /dev/null)
    podman logs "$1" > "$RUN/$1.log" 2>&1
}
early="bb-stage-early-$$"
if stop_replay "$early"; then
    podman_stop "$early"
    if { [ "$stop_status" = 0 ] || [ "$stop_status" = 143 ]; } && awk -v s="$stop_seconds" 'BEGIN { exit !(s < 5) }'; then
        pass "podman stop at once after podman run (the daemon starting): exit $stop_status in $stop_seconds s"
    else
        fail "podman stop at once after podman run: exit ${stop_status:-?} after $stop_seconds s (137: SIGKILL after the grace time, SIGTERM lost)"
    fi
fi
stdbuf -oL mosquitto_sub -h 127.0.0.1 -p "$ctr_port" -v -t 'beaconbridge/demo/#' > "$RUN/stop.mqtt" 2>&1 &
PIDS+=($!)
sleep 0.5
late="bb-stage-stop-$$"
# The broker holds the replays' retained messages (availability, presence, region state): wait for this
# container's own `online` and an event after it.
started() { awk '/\/availability online$/ { on = 1; next } on && /"kind":"/ { found = 1; exit } END { exit !found }' "$RUN/stop.mqtt"; }
if stop_replay "$late"; then
    for _ in $(seq 300); do started && break; sleep 0.1; done
    if started; then
        podman_stop "$late"
        sleep 0.5
        last=$(grep '/availability ' "$RUN/stop.mqtt" | tail -n 1)
        if [ "$stop_status" != 0 ] || [ "$last" != "beaconbridge/demo/availability offline" ] \
            || ! grep -q 'msg=stopping signal=SIGTERM' "$RUN/$late.log"; then
            fail "podman stop: exit ${stop_status:-?} after $stop_seconds s, last availability '$last': $(tail -n 3 "$RUN/$late.log" | tr '\n' ' ')"
        else
            pass "podman stop of a running replay: SIGTERM, offline published, exit 0, in $stop_seconds s"
        fi
    else
        podman logs "$late" > "$RUN/$late.log" 2>&1
        fail "podman stop: no online and event within 30 s of the start: $(tail -n 3 "$RUN/$late.log" | tr '\n' ' ')"
    fi
fi

# 5. `run`, the image's default command, as compose starts it: NET_RAW and NET_ADMIN, the configuration mounted.
mkdir -p "$RUN/run"
demo_config "$ctr_port" /var/lib/beaconbridge/outbox.sqlite | sed 's/^  id: demo$/  id: demo-run/' > "$RUN/run/beaconbridge.yaml"
stdbuf -oL mosquitto_sub -h 127.0.0.1 -p "$ctr_port" -v -t 'beaconbridge/demo-run/availability' > "$RUN/run.mqtt" 2>&1 &
PIDS+=($!)
CONTAINERS+=(bb-stage-run-$$)
if timeout 60 podman run -d --name "bb-stage-run-$$" "${COMMON[@]}" --cap-drop ALL --cap-add NET_RAW,NET_ADMIN \
    -v "$RUN/run/beaconbridge.yaml:/etc/beaconbridge/beaconbridge.yaml:ro" -v "$RUN/state-run:/var/lib/beaconbridge" \
    "$image" > /dev/null 2> "$RUN/run-start.log"; then
    # Up to 30 s for either end: online, or the daemon's exit.
    for _ in $(seq 300); do
        grep -q ' online$' "$RUN/run.mqtt" && break
        [ "$(podman inspect --format '{{.State.Running}}' "bb-stage-run-$$" 2> /dev/null)" = false ] && break
        sleep 0.1
    done
    timeout 60 podman stop -t 15 "bb-stage-run-$$" > /dev/null 2>&1
    run_status=$(podman inspect --format '{{.State.ExitCode}}' "bb-stage-run-$$" 2> /dev/null)
    podman logs "bb-stage-run-$$" > "$RUN/run.log" 2>&1
    sleep 0.5
    reason=$(sed -n 's/.*msg="cannot start the source" error="\([^"]*\)".*/\1/p' "$RUN/run.log" | head -n 1)
    if grep -q ' online$' "$RUN/run.mqtt"; then
        if [ "$run_status" = 0 ] && [ "$(tail -n 1 "$RUN/run.mqtt")" = "beaconbridge/demo-run/availability offline" ]; then
            pass "run with NET_RAW and NET_ADMIN: scanning, online; podman stop: offline, exit 0"
        else fail "run: online, but podman stop gave exit ${run_status:-?}, last '$(tail -n 1 "$RUN/run.mqtt")'"; fi
    elif [[ "$reason" == "the kernel has no Bluetooth support"* ]] && ! grep -q -i 'permission\|not permitted' "$RUN/run.log"; then
        pass "run with NET_RAW and NET_ADMIN read the mounted configuration and started the scanner: \"${reason%%:*}\" (exit $run_status; this kernel has none, so the capabilities are not exercised)"
    else
        fail "run with NET_RAW and NET_ADMIN: exit ${run_status:-?}: $(tail -n 3 "$RUN/run.log" | tr '\n' ' ')"
    fi
else
    fail "podman run -d (the default command) failed: $(tail -n 3 "$RUN/run-start.log" | tr '\n' ' ')"
fi
run_seconds=$(elapsed "$t")

# 6. docker/compose.yaml itself, the gateway's service (its mosquitto comes from Docker Hub, which this need not
# reach): podman-compose from PyPI, pinned, in a cached virtual environment (Debian 12's podman-compose 1.0.3 adds
# the project's network to a host-network service, and podman refuses: "cannot set multiple networks without bridge
# network mode"; fixed in 1.3.0). Its own project name, so a real deployment named beaconbridge is not touched.
t=$(date +%s.%N)
COMPOSE_VERSION=1.6.0
venv="$BB_CACHE/venv-podman-compose-$COMPOSE_VERSION"
if [ ! -f "$venv/.complete" ]; then
    # Made in place (a virtual environment's scripts name its path) and marked complete last.
    mkdir -p "$BB_CACHE"
    rm -rf "$venv"
    { python3 -m venv "$venv" && timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check \
        "podman-compose==$COMPOSE_VERSION"; } > "$RUN/compose-install.log" 2>&1 && touch "$venv/.complete"
fi
if [ ! -f "$venv/.complete" ]; then
    echo "SKIP docker/compose.yaml: podman-compose $COMPOSE_VERSION could not be installed from PyPI: $(tail -n 1 "$RUN/compose-install.log")"
else
    project="bbstage$$"
    mkdir -p "$RUN/compose"
    cp "$REPO/docker/compose.yaml" "$REPO/docker/mosquitto.conf" "$RUN/compose/"
    demo_config "$ctr_port" /var/lib/beaconbridge/outbox.sqlite | sed 's/^  id: demo$/  id: demo-compose/' \
        > "$RUN/compose/beaconbridge.yaml"
    compose=(timeout 120 "$venv/bin/podman-compose" -p "$project" -f "$RUN/compose/compose.yaml")
    "${compose[@]}" up -d --no-deps beaconbridge > "$RUN/compose-up.log" 2>&1
    cid=$(podman ps -a -q --filter "label=io.podman.compose.project=$project" --filter "label=com.docker.compose.service=beaconbridge" | head -n 1)
    if [ -z "$cid" ]; then
        fail "podman-compose up beaconbridge created no container: $(tail -n 3 "$RUN/compose-up.log" | tr '\n' ' ')"
    else
        for _ in $(seq 300); do
            podman logs "$cid" 2>&1 | grep -q 'cannot start the source\|msg=scanning' && break
            sleep 0.1
        done
        settings=$(podman inspect --format 'image={{.ImageName}} network={{.HostConfig.NetworkMode}} caps={{.EffectiveCaps}} read-only={{.HostConfig.ReadonlyRootfs}} {{.HostConfig.SecurityOpt}}' "$cid")
        podman logs "$cid" > "$RUN/compose.log" 2>&1
        expected="image=localhost/beaconbridge:latest network=host caps=[CAP_NET_ADMIN CAP_NET_RAW] read-only=true [no-new-privileges]"
        reason=$(sed -n 's/.*msg="cannot start the source" error="\([^"]*\)".*/\1/p' "$RUN/compose.log" | head -n 1)
        if [ "$settings" != "$expected" ]; then
            fail "podman-compose's container: $settings, expected $expected"
        elif grep -q 'msg=scanning' "$RUN/compose.log" || [[ "$reason" == "the kernel has no Bluetooth support"* ]]; then
            pass "docker/compose.yaml with podman-compose $COMPOSE_VERSION: $settings; the gateway started its scanner (${reason%%:*})"
        else
            fail "docker/compose.yaml: the gateway did not get to its scanner: $(tail -n 3 "$RUN/compose.log" | tr '\n' ' ')"
        fi
    fi
    "${compose[@]}" down -v > "$RUN/compose-down.log" 2>&1
    podman ps -a -q --filter "label=io.podman.compose.project=$project" | xargs -r podman rm -f -t 0 > /dev/null 2>&1
    podman volume ls -q --filter "label=io.podman.compose.project=$project" | xargs -r podman volume rm > /dev/null 2>&1
fi
compose_seconds=$(elapsed "$t")

echo "container-stage: $passed checks passed, $failed failed; image $(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }'); times: package $package_seconds s, image $image_seconds s, replays $replay_seconds s, stop and run $run_seconds s, compose $compose_seconds s, stage $(elapsed "$stage_start") s"
[ "$failed" = 0 ] || CONTAINER_STAGE_KEEP=1
[ "$failed" = 0 ]
