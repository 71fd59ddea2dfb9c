#!/usr/bin/env bash
# Says how much of scripts/link-order.txt the release binary still has, and fails when too little: the list is made
# by scripts/link-order.sh (callgrind, about 10 minutes) and goes stale as code moves. A name the binary no longer
# has is skipped by the link, so a stale list costs RSS (docs/daemon-bench.md, session 28), not correctness; this
# check, run by the release stage, makes the staleness visible and stops it before it costs much.
# Two figures: the share of all listed names the binary defines, and the share of the hottest HOT (default 500),
# the functions that run for every report, where a loss costs most. Fails when either is under MIN percent
# (LINK_ORDER_MIN_PERCENT, default 90); then rerun scripts/link-order.sh and commit the new list.
# Usage: scripts/link-order-check.sh [BIN [LIST]]   (default .build/release/beaconbridge, scripts/link-order.txt)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$REPO/.build/release/beaconbridge}
LIST=${2:-$REPO/scripts/link-order.txt}
MIN=${LINK_ORDER_MIN_PERCENT:-90}
HOT=${LINK_ORDER_HOT:-500}
[ -r "$BIN" ] || { echo "link-order-check: no binary at $BIN" >&2; exit 2; }
[ -r "$LIST" ] || { echo "link-order-check: no list at $LIST" >&2; exit 2; }
[[ "$MIN" =~ ^[0-9]+$ && "$HOT" =~ ^[1-9][0-9]*$ ]] || {
    echo "link-order-check: LINK_ORDER_MIN_PERCENT and LINK_ORDER_HOT must be whole numbers" >&2
    exit 2
}
DEFINED=$(mktemp)
trap 'rm -f "$DEFINED"' EXIT
# The release binary keeps its .symtab (scripts/deb.sh strips only the package's copy).
nm --defined-only "$BIN" | awk 'NF >= 3 { print $3 }' | sort -u > "$DEFINED"
[ -s "$DEFINED" ] || { echo "link-order-check: $BIN has no symbol table (stripped?)" >&2; exit 2; }
# awk, not comm: the list's order (hottest first) matters for the second figure.
read -r total present hot_total hot_present < <(awk -v hot="$HOT" '
    NR == FNR { defined[$0] = 1; next }
    $0 != "" {
        total++; if ($0 in defined) present++
        if (total <= hot) { hot_total++; if ($0 in defined) hot_present++ }
    }
    END { print total + 0, present + 0, hot_total + 0, hot_present + 0 }' "$DEFINED" "$LIST")
[ "$total" -gt 0 ] || { echo "link-order-check: $LIST lists no function" >&2; exit 2; }
percent=$((100 * present / total))
hot_percent=$((100 * hot_present / hot_total))
echo "link order: the binary has $present of the $total functions listed ($percent %), $hot_present of the" \
    "hottest $hot_total ($hot_percent %); least allowed $MIN %"
if [ "$percent" -lt "$MIN" ] || [ "$hot_percent" -lt "$MIN" ]; then
    echo "link-order-check: $LIST is stale for $BIN: rerun scripts/link-order.sh and commit the list" >&2
    exit 1
fi
