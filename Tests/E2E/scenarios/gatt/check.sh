#!/usr/bin/env bash
# Sightings of the connectable iBeacon keep reaching the broker while `beaconbridge gatt` holds a connection
# on the same adapter (hci0) and after the GATT sessions; the guest checked the GATT values and exit codes.
. "$(dirname "$0")/../../check-lib.sh"
topic="$TOPIC_BASE/sighting/$IBEACON_ID"
hold_start=$(mark_time gatt-hold-start)
hold_end=$(mark_time gatt-hold-end)
after=$(mark_time after-gatt)
[ -n "$hold_start" ] && [ -n "$hold_end" ] || problem "the guest did not reach the held connection"
during=$(awk -v t="$topic" -v s="${hold_start:-0}" -v e="${hold_end:-0}" '$2 == t && $1 >= s + 2 && $1 <= e' "$MQTT_LOG" | wc -l)
echo "check: $during sightings of $IBEACON_ID from 2 s into the held connection to its end (${hold_start:-?}..${hold_end:-?})"
[ "$during" -ge 2 ] || problem "sightings stopped while the GATT connection was held ($during in that window)"
late=$(awk -v t="$topic" -v s="$(( ${after:-0} - 4 ))" '$2 == t && $1 >= s' "$MQTT_LOG" | wc -l)
echo "check: $late sightings in the last 4 s after the GATT sessions"
[ "$late" -ge 2 ] || problem "sightings did not resume after the GATT sessions ($late)"
dfu_start=$(mark_time dfu-start)
dfu_end=$(mark_time dfu-end)
[ -n "$dfu_start" ] && [ -n "$dfu_end" ] || problem "the guest did not reach the DFU transfer"
in_dfu=$(awk -v t="$topic" -v s="${dfu_start:-0}" -v e="${dfu_end:-0}" '$2 == t && $1 >= s + 2 && $1 <= e' "$MQTT_LOG" | wc -l)
echo "check: $in_dfu sightings of $IBEACON_ID from 2 s into the DFU transfer to its end (${dfu_start:-?}..${dfu_end:-?})"
[ "$in_dfu" -ge 2 ] || problem "sightings stopped during the DFU transfer ($in_dfu in that window)"
# The daemon's own commands and update over MQTT (issue 31, branch dfud): daemon_gatt_check.py; the recording
# of the daemon's messages goes to the run directory (daemon-gatt.jsonl, beside mqtt.log).
python3 "$(dirname "$0")/daemon_gatt_check.py" "$MQTT_LOG" "$CONSOLE_LOG" "$(dirname "$MQTT_LOG")/daemon-gatt.jsonl" \
    || problem "the daemon's GATT commands and update over MQTT"
finish "gatt scenario"
