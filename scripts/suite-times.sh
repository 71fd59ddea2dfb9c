#!/usr/bin/env bash
# Prints how long each test suite took (slowest first) from a `swift test` log, then the run's closing line.
# Usage: scripts/suite-times.sh .build/test.log
set -euo pipefail
log="${1:-.build/test.log}"
[ -f "$log" ] || { echo "suite-times: no log at $log" >&2; exit 0; }
echo "== suite times (wall clock from the run's start; suites run in parallel) =="
LC_ALL=C grep -E '^[^ ]+ Suite [A-Za-z0-9_]+ (passed|failed) after [0-9.]+ seconds' "$log" \
  | LC_ALL=C sed -E 's/^[^ ]+ Suite ([A-Za-z0-9_]+) (passed|failed) after ([0-9.]+) seconds.*/\3 \1 \2/' \
  | sort -rn | awk '{ printf "  %8.3f s  %-40s %s\n", $1, $2, $3 }'
LC_ALL=C grep -E '^[^ ]+ Test run with' "$log" | tail -1 || true
