#!/usr/bin/env bash
# The phone is one device irk:phone through two address rotations: presence `seen` once (no `away` between,
# a `stale` and `seen` again at most after a silence longer than the gateway's timeout;
# its own away timeout is 60 s against the gateway's 4 s), a region enter, sightings from all three addresses
# under the stable id; the stranger's address appears in no message; the key appears nowhere.
. "$(dirname "$0")/../../check-lib.sh"
id='irk:phone'
started=$(mark_time advertising-start); rotated=$(mark_time rotation-2); stopped=$(mark_time advertising-stop)
seen=$(first_message "$TOPIC_BASE/presence/$id" "$started" '"state":"seen"')
within "$started" 6 "$seen" || problem "no presence seen of $id within 6 s of advertising's start (${seen:-none})"
# A second `seen` is only right after a `stale` (a silence longer than the gateway's 4 s during a rotation; the
# phone's own timeout holds it), never after an `away`.
seens=$(awk -v t="$TOPIC_BASE/presence/$id" '$2 == t && /"state":"seen"/' "$MQTT_LOG" | wc -l)
stales=$(awk -v t="$TOPIC_BASE/presence/$id" '$2 == t && /"state":"stale"/' "$MQTT_LOG" | wc -l)
[ "$seens" -ge 1 ] && [ "$seens" -le $((stales + 1)) ] \
    || problem "presence seen of $id $seens times with $stales stale: the rotation was not followed as one device"
[ -z "$(awk -v t="$TOPIC_BASE/presence/$id" '$2 == t && /"state":"away"/' "$MQTT_LOG")" ] \
    || problem "$id went away during the test (its own away timeout is 60 s)"
enter=$(first_message "$TOPIC_BASE/region/hall/$id" "$started" '"event":"enter"')
within "$started" 6 "$enter" || problem "no region enter of hall for $id within 6 s (${enter:-none})"
for address in 4A:1B:2C:A4:90:BB 5D:3E:4F:03:55:1F 7F:60:71:76:4C:22; do
    [ -n "$(awk -v t="$TOPIC_BASE/sighting/$id" -v a="\"mac\":\"$address\"" '$2 == t && index($0, a)' "$MQTT_LOG")" ] \
        || problem "no sighting of $id from its address $address"
done
last=$(awk -v t="$TOPIC_BASE/sighting/$id" '$2 == t { print $1 }' "$MQTT_LOG" | tail -1)
[ -n "$last" ] && awk -v l="$last" -v r="$rotated" 'BEGIN { exit !(l >= r) }' \
    || problem "no sighting of $id after the second rotation (last ${last:-none}, rotation at $rotated)"
grep -qi '66:55:AA:7B:E2:0B\|6655aa7be20b' "$MQTT_LOG" && problem "the stranger's address was published"
grep -qi 'ec0234a357c8ad05341010a60a397d9b\|9b7d390aa610103405adc857a33402ec' "$MQTT_LOG" && problem "the key appears in MQTT messages"
console | grep -qi 'ec0234a357c8ad05341010a60a397d9b' && problem "the key appears in the daemon's output"
console | grep -q '^E2E-DAEMON: .*private devices' || problem "the daemon did not log its private devices"
# The stranger's reports did reach the gateway (and were dropped), so "never published" is not vacuous.
unresolved=$(console | sed -n 's/^E2E-DAEMON: .*msg=stopped .*private_unresolved=\([0-9]*\).*/\1/p' | tail -1)
[ "${unresolved:-0}" -gt 0 ] || problem "the gateway counted no unresolved private reports (${unresolved:-none}): hci2 was never heard"
[ -n "$stopped" ] || problem "the guest did not finish advertising"
finish "private-devices scenario"
