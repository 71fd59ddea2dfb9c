#!/usr/bin/env bash
# Issue 15's determinism check: clean clones of one commit, each running a test command while stress-ng keeps
# every core busy, back to back; stops at the first failure. Prints one line per run (result, wall time, the
# Swift suite's closing line) and keeps each run's log.
# Usage: scripts/stress-runs.sh [RUNS] [COMMIT]        (default 10 runs of HEAD)
# Environment: STRESS_TARGET (the make target, default `test`; `suite`: one clean clone built once before the
#   runs, unloaded, then only the Swift suites, `swift test --skip-build`, in every run), STRESS_CPUS (stress-ng
#   workers, default the core count), STRESS_DIR (where clones and logs go, default /tmp/bb-stress.<date>).
# The clones share only what `make test` caches outside the tree on purpose (~/.cache/beaconbridge: the pinned
# Python environments and the systemd stage's root file system); each clone builds from nothing.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-10}
commit=$(git -C "$REPO" rev-parse "${2:-HEAD}") || exit 64
target=${STRESS_TARGET:-test}
cpus=${STRESS_CPUS:-$(nproc)}
dir=${STRESS_DIR:-/tmp/bb-stress.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$dir"
command -v stress-ng >/dev/null || { apt-get install -y -qq stress-ng >/dev/null 2>&1 || exit 69; }
export PATH="/opt/swift/usr/bin:$PATH"

stress_pid=""
cleanup() { [ -n "$stress_pid" ] && kill "$stress_pid" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "$target" = suite ]; then
    clone="$dir/clone"
    rm -rf "$clone"
    git clone -q --no-hardlinks "$REPO" "$clone" && git -C "$clone" checkout -q "$commit" || exit 74
    ( cd "$clone" && make -s deps && swift build --build-tests -Xswiftc -warnings-as-errors ) > "$dir/build.log" 2>&1 \
        || { echo "stress-runs: the build failed, log $dir/build.log"; exit 1; }
fi
stress-ng --cpu "$cpus" --quiet >/dev/null 2>&1 &
stress_pid=$!
echo "stress-runs: $runs runs of $target at ${commit:0:12}, stress-ng --cpu $cpus (pid $stress_pid), logs in $dir"

passed=0
for i in $(seq 1 "$runs"); do
    log="$dir/run$i.log"
    start=$(date +%s)
    if [ "$target" = suite ]; then
        ( cd "$clone" && swift test --skip-build ) > "$log" 2>&1
    else
        clone="$dir/run$i"
        rm -rf "$clone"
        git clone -q --no-hardlinks "$REPO" "$clone" && git -C "$clone" checkout -q "$commit" || exit 74
        ( cd "$clone" && make "$target" ) > "$log" 2>&1
    fi
    status=$?
    seconds=$(( $(date +%s) - start ))
    closing=$(LC_ALL=C grep -E 'Test run with [0-9]+ tests' "$log" | tail -1 | sed -E 's/^[^ ]+ //')
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    if [ "$status" = 0 ]; then verdict=PASS; passed=$((passed + 1)); else verdict=FAIL; fi
    printf 'run %2d: %s exit %d in %d min %02d s (load %s) %s\n' "$i" "$verdict" "$status" \
        $((seconds / 60)) $((seconds % 60)) "$load" "$closing" | tee -a "$dir/summary.txt"
    [ "$status" = 0 ] || { echo "stress-runs: run $i failed, log $log" | tee -a "$dir/summary.txt"; exit 1; }
    [ "$target" = suite ] || rm -rf "$clone/.build"  # the next clone builds from nothing; keep only the logs
done
echo "stress-runs: $passed of $runs passed" | tee -a "$dir/summary.txt"
