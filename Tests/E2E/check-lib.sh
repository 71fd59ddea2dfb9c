# Helpers for scenarios' host-side check.sh (bash). mqtt.log lines: <unix time> <topic> <payload>.
IBEACON_ID='ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2'
EDDYSTONE_ID='eddystone-uid:edd1ebeac04e5defa017:0bdb87539b67'
TOPIC_BASE='beaconbridge/e2e'
CHECK_STATUS=0

console() { tr -d '\r' < "$CONSOLE_LOG"; }
problem() { echo "check: $*"; CHECK_STATUS=1; }
# mark NAME -> unix seconds printed by the guest's `mark NAME`
mark_time() { console | sed -n "s/^E2E-MARK: $1 \([0-9]*\)$/\1/p" | tail -1; }
# first_message TOPIC [AFTER] [PAYLOAD-REGEX] -> arrival time of the first matching message at or after AFTER
first_message() {
    awk -v topic="$1" -v after="${2:-0}" -v pattern="${3:-.}" \
        '$2 == topic && $1 >= after && $0 ~ pattern { print $1; exit }' "$MQTT_LOG"
}
count_messages() { awk -v topic="$1" '$2 == topic' "$MQTT_LOG" | wc -l; }
# within START SECONDS TIME -> true when TIME is set and TIME - START <= SECONDS
within() { [ -n "$3" ] && awk -v s="$1" -v d="$2" -v t="$3" 'BEGIN { exit !(t - s <= d) }'; }
finish() {
    if [ "$CHECK_STATUS" = 0 ]; then echo "check: $1 OK"; else echo "check: mqtt.log has $(wc -l < "$MQTT_LOG") messages"; fi
    exit "$CHECK_STATUS"
}
