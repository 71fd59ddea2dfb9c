#!/usr/bin/env bash
# The arm64 stage of `make test` (docs/testing.md; alone: `make arm64-stage`): builds the arm64 Debian package with
# trixie's Swift 6.0.3 (scripts/cross-build.sh; the cached roots of scripts/cross-roots.sh, created on a machine's
# first run, in the background from the start of `make test`) and runs its smoke tests under qemu-user
# (scripts/arm64-smoke.sh) against the amd64 release binary. Prints the stage's times (the wait for the machine's
# build lock, the build, the packaging, the smoke tests).
#   scripts/arm64-stage.sh            build, package and smoke-test in the foreground
#   scripts/arm64-stage.sh --start    start the build and packaging in the background at the lowest CPU priority
#                                     (nice 19: it takes only what the foreground leaves idle, as the QEMU and
#                                     Home Assistant stages leave one core) and return at once
#   scripts/arm64-stage.sh --finish   wait for that background build (at most ARM64_WAIT_S, default 3600 s), then
#                                     smoke-test; without a background build, the same as no option
# `make test` runs --start after the release stage and --finish last. Prints SKIP and succeeds only where it cannot
# run at all: not root, or no binfmt_misc for qemu-user.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
LOG="$REPO/.build/arm64-stage.log"
STATE="$REPO/.build/arm64-stage.background"
mode=${1:-}
case $mode in "" | --start | --finish) ;; *) echo "usage: $0 [--start|--finish]" >&2; exit 64 ;; esac
started=$SECONDS
if [ "$(id -u)" != 0 ]; then
    [ "$mode" = --start ] || echo "SKIP: arm64 stage: needs root (debootstrap and chroot into the cached roots)"
    exit 0
fi
if [ ! -e /proc/sys/fs/binfmt_misc/status ] && ! mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null; then
    [ "$mode" = --start ] || echo "SKIP: arm64 stage: binfmt_misc is not mounted and cannot be mounted here (qemu-user cannot run the arm64 root)"
    exit 0
fi
mkdir -p "$REPO/.build"

# A background build left by an earlier, interrupted run is stopped first (its process group).
stop_stale() {
    local pid
    pid=$(sed -n 's/^pid=//p' "$STATE/info" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -- "-$pid" 2>/dev/null || true; fi
    rm -rf "$STATE"
}

if [ "$mode" = --start ]; then
    stop_stale
    mkdir -p "$STATE"
    # setsid: its own process group, so stop_stale can end the whole build; nice 19: idle cores only.
    setsid nice -n 19 bash -c '"$1" arm64 > "$2" 2>&1; echo $? > "$3.tmp"; mv "$3.tmp" "$3"' \
        _ "$REPO/scripts/cross-build.sh" "$LOG" "$STATE/status" < /dev/null > /dev/null 2>&1 &
    printf 'pid=%s\nstarted=%s\n' "$!" "$(date +%s)" > "$STATE/info"
    echo "arm64 stage: build started in the background at nice 19 (pid $!, log .build/arm64-stage.log)"
    exit 0
fi

if [ "$mode" = --finish ] && [ -f "$STATE/info" ]; then
    bg_started=$(sed -n 's/^started=//p' "$STATE/info")
    pid=$(sed -n 's/^pid=//p' "$STATE/info")
    limit=${ARM64_WAIT_S:-3600}
    while [ ! -f "$STATE/status" ]; do
        if ! kill -0 "$pid" 2>/dev/null && [ ! -f "$STATE/status" ]; then
            sleep 1
            [ -f "$STATE/status" ] || { tail -n 40 "$LOG"; echo "FAIL: arm64 stage: the background build (pid $pid) ended without a status"; rm -rf "$STATE"; exit 1; }
        fi
        if [ $((SECONDS - started)) -ge "$limit" ]; then
            stop_stale
            tail -n 40 "$LOG"
            echo "FAIL: arm64 stage: the background build did not end within $limit s of the wait (stopped)"
            exit 1
        fi
        sleep 2
    done
    status=$(cat "$STATE/status")
    rm -rf "$STATE"
    waited=$((SECONDS - started))
    echo "arm64 stage: background build ended $(( $(date +%s) - bg_started )) s after its start; waited $waited s for it here"
    if [ "$status" != 0 ]; then
        tail -n 40 "$LOG"
        echo "FAIL: arm64 stage: the arm64 package did not build (exit $status; log: .build/arm64-stage.log)"
        exit 1
    fi
else
    "$REPO/scripts/cross-build.sh" arm64 > "$LOG" 2>&1 \
        || { tail -n 40 "$LOG"; echo "FAIL: arm64 stage: the arm64 package did not build (log: .build/arm64-stage.log)"; exit 1; }
fi
grep -E '^\[cross .*\] (roots ready|waited|built|packaged|arm64 package)' "$LOG" || true
built=$SECONDS
status=0
"$REPO/scripts/arm64-smoke.sh" "$(tail -n 1 "$LOG")" || status=$?
echo "arm64 stage: package $((built - started)) s here, smoke tests $((SECONDS - built)) s, total $((SECONDS - started)) s"
exit $status
