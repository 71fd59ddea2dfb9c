#!/usr/bin/env bash
# Each gateway published sightings of the other's identity beacon (ibeacon:<site uuid>:<major>:<minor>, major and
# minor the halves of FNV-1a-32 of the gateway id: docs/rooms.md) while both scanned; neither logged a refused
# identity beacon; no room event names an identity beacon (they are never room evidence).
. "$(dirname "$0")/../../check-lib.sh"
# The default rooms.calibration.uuid (CalibrationSettings.defaultUUID).
uuid='bb0ca11b-0029-4c0d-9e00-6a7e3a1d0000'
identity() {
    python3 -c 'import sys
h = 0x811C9DC5
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
print(f"ibeacon:{sys.argv[2]}:{h >> 16}:{h & 0xFFFF}")' "$1" "$uuid"
}
start=$(mark_time gw-b-scanning)
stop=$(mark_time stopping)
[ -n "$start" ] && [ -n "$stop" ] || problem "the guest did not reach both daemons scanning (marks: '$start' '$stop')"
for pair in "gw-a gw-b" "gw-b gw-a"; do
    set -- $pair
    id=$(identity "$2")
    t=$(first_message "beaconbridge/$1/sighting/$id" "${start:-0}")
    [ -n "$t" ] || problem "$1 published no sighting of $2's identity beacon ($id) after both scanned"
    [ -n "$t" ] && echo "check: $1 heard $2's identity beacon $id at $t (both scanning since $start)"
done
console | grep -q '^E2E-DAEMON.*identity beacon not advertising' && problem "a gateway could not advertise its identity beacon"
if awk '$2 ~ /^beaconbridge\/rooms\// && $3 ~ /"beacon_id":"ibeacon:'"$uuid"'/' "$MQTT_LOG" | grep -q .; then
    problem "a room event names an identity beacon"
fi
finish "identity scenario"
