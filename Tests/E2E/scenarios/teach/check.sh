#!/usr/bin/env bash
# The teach replies (done, stored, reports heard, levels near the injected -70 and -55 dBm, enter/exit levels from
# the boundary) and the region following the taught levels: no enter before the boundary was taught (the
# configured -40 is never reached), exit after the exit period (5 s) once at -80, enter within 6 s at -58.
. "$(dirname "$0")/../../check-lib.sh"
topic="$TOPIC_BASE/region/desk/$IBEACON_ID"
replies="$TOPIC_BASE/reply/regions/teach"
# done AT -> "reports level spread stored enter exit" of the last `done` reply for AT ("" when there is none)
done_reply() {
    awk -v topic="$replies" '$2 == topic { $1 = ""; $2 = ""; print }' "$MQTT_LOG" | python3 -c '
import json, sys
found = ""
for line in sys.stdin:
    try:
        reply = json.loads(line)
    except ValueError:
        continue
    if reply.get("state") != "done" or reply.get("at") != sys.argv[1] or reply.get("device") != sys.argv[2]:
        continue
    level = reply.get("level") or {}
    levels = reply.get("levels") or {}
    found = " ".join(str(v) for v in (level.get("reports", 0), level.get("level"), level.get("spread"),
                                       reply.get("stored"), levels.get("enter"), levels.get("exit")))
print(found)' "$1" "$IBEACON_ID"
}
# near VALUE WANT TOLERANCE -> true when |VALUE - WANT| <= TOLERANCE (VALUE a number)
near() { awk -v v="$1" -v w="$2" -v t="$3" 'BEGIN { exit !(v ~ /^-?[0-9.]+$/ && (v - w <= t) && (w - v <= t)) }'; }

for spot in "boundary -70" "inside -55"; do
    read -r at injected <<< "$spot"
    set -- "$at" "$injected"
    reply=$(done_reply "$1")
    if [ -z "$reply" ]; then problem "no teach reply with state done for $1"; continue; fi
    read -r reports level spread stored enter exit_level <<< "$reply"
    echo "check: teach $1: $reports reports, level $level dBm, spread $spread dB, stored $stored, enter $enter, exit $exit_level (injected $2 +-1)"
    [ "$reports" -ge 20 ] 2>/dev/null || problem "teach $1 heard $reports reports, at least 20 expected (8 s at 10 a second)"
    near "$level" "$2" 1.5 || problem "teach $1 stored level $level dBm, the injector sent $2 (+-1)"
    [ "$stored" = True ] || problem "teach $1 stored nothing ($stored)"
    if [ "$1" = boundary ]; then
        # TaughtRegionLink.levels: enter 2 dB below the boundary, exit 5 dB below the enter level.
        near "$enter" -72 1.5 || problem "teach boundary set enter $enter dBm, -72 expected"
        near "$exit_level" -77 1.5 || problem "teach boundary set exit $exit_level dBm, -77 expected"
    fi
done

taught=$(mark_time teach-boundary-end)
[ -n "$taught" ] || problem "the guest did not finish the boundary teach"
early=$(first_message "$topic" 0 '"event":"enter"')
if [ -n "$early" ] && [ -n "$taught" ] && awk -v e="$early" -v t="$taught" 'BEGIN { exit !(e < t) }'; then
    problem "region enter at $early before the boundary was taught ($taught): the configured -40 dBm was never reached"
fi
inside=$(mark_time teach-inside-start)
enter=$(first_message "$topic" "${inside:-0}" '"event":"enter"')
within "${inside:-0}" 12 "$enter" || problem "no region enter within 12 s of the inside teach's start at -55 dBm (${enter:-none})"
echo "check: teach-inside-start at $inside, enter at ${enter:-none}"

exit_checks() {  # MARK: an exit after the exit period (5 s), within 14 s of the mark
    local at exit_time
    at=$(mark_time "$1")
    exit_time=$(first_message "$topic" "${at:-0}" '"event":"exit"')
    within "${at:-0}" 14 "$exit_time" || problem "no region exit within 14 s of $1 (${exit_time:-none})"
    if [ -n "$exit_time" ] && within "${at:-0}" 3 "$exit_time"; then
        problem "exit at $exit_time came before the 5 s exit period after $1 ($at)"
    fi
    echo "check: $1 at $at, exit at ${exit_time:-none}"
}
exit_checks rssi-80
back=$(mark_time rssi-58)
enter=$(first_message "$topic" "${back:-0}" '"event":"enter"')
within "${back:-0}" 6 "$enter" || problem "no region enter within 6 s of -58 dBm (${enter:-none})"
echo "check: rssi-58 at $back, enter at ${enter:-none}"
exit_checks rssi-80-again
finish "teach scenario"
