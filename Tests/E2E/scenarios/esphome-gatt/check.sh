#!/usr/bin/env bash
# The host's aioesphomeapi client (client.py, run on the guest's E2E-HOST: esphome-client directive) passed every
# step, and sightings of the connectable iBeacon kept reaching the broker while it held its connection.
. "$(dirname "$0")/../../check-lib.sh"
log="$(dirname "$CONSOLE_LOG")/esphome-client.log"
for _ in $(seq 1 300); do grep -q '^EXIT ' "$log" 2>/dev/null && break; sleep 0.1; done
echo "----- aioesphomeapi client through the proxy -----"
cat "$log" 2>/dev/null || echo "(no client log at $log)"
echo "-----"
grep -qx 'EXIT 0' "$log" 2>/dev/null || problem "the aioesphomeapi client did not pass (see above)"
topic="$TOPIC_BASE/sighting/$IBEACON_ID"
start=$(mark_time esphome-client-start)
end=$(mark_time esphome-client-end)
[ -n "$start" ] && [ -n "$end" ] || problem "the guest did not reach the client session"
during=$(awk -v t="$topic" -v s="${start:-0}" -v e="${end:-0}" '$2 == t && $1 >= s + 2 && $1 <= e' "$MQTT_LOG" | wc -l)
echo "check: $during sightings of $IBEACON_ID during the client session (${start:-?}..${end:-?})"
[ "$during" -ge 2 ] || problem "sightings stopped while the proxy held the connection ($during in that window)"
finish "esphome-gatt scenario"
