#!/usr/bin/env bash
# Sightings of both beacons on the host broker within 8 s of the daemon's scanning (start_daemon waits for it;
# the console gives the start-up time); the daemon logged the adapter it opened; availability went online.
. "$(dirname "$0")/../../check-lib.sh"
start=$(mark_time daemon-scanning)
console | grep -q '^E2E-DAEMON: .*hci0' || problem "the daemon's log does not name the adapter hci0"
for id in "$IBEACON_ID" "$EDDYSTONE_ID"; do
    t=$(first_message "$TOPIC_BASE/sighting/$id")
    within "$start" 8 "$t" || problem "no sighting of $id within 8 s of scanning ($start; first: ${t:-none})"
done
[ -n "$(first_message "$TOPIC_BASE/availability" 0 'online')" ] || problem "availability never went online"
finish "sightings scenario"
