#!/usr/bin/env bash
# Runs one stage of `make check` / `make test` and prints its wall time as one line when it ends, passed or not:
#   == stage NAME: 123 s (ok)        == stage NAME: 45 s (FAILED, exit 2)
# The line also goes to .build/stage-times.log; `scripts/stage.sh --summary` prints that log (every stage of the
# run so far) and `scripts/stage.sh --reset` empties it (at the start of a run).
# Usage: scripts/stage.sh NAME COMMAND [ARGUMENTS...]
set -uo pipefail
log="$(cd "$(dirname "$0")/.." && pwd)/.build/stage-times.log"
case "${1:-}" in
--reset) mkdir -p "$(dirname "$log")"; : > "$log"; exit 0 ;;
--summary)
    echo "== stage times =="
    [ -f "$log" ] && sed 's/^== stage /  /' "$log"
    exit 0 ;;
esac
[ $# -ge 2 ] || { echo "usage: scripts/stage.sh NAME COMMAND [ARGUMENTS...]" >&2; exit 64; }
name=$1
shift
started=$(date +%s.%N)
"$@"
status=$?
seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
if [ "$status" = 0 ]; then outcome="ok"; else outcome="FAILED, exit $status"; fi
line="== stage $name: $seconds s ($outcome)"
echo "$line"
mkdir -p "$(dirname "$log")"
echo "$line" >> "$log"
exit "$status"
