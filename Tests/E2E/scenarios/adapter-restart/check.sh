#!/usr/bin/env bash
# The daemon logged the removal and the reopen, telemetry counted it, sightings resumed after the comeback.
. "$(dirname "$0")/../../check-lib.sh"
console | grep -q '^E2E-DAEMON: .*adapter removed' || problem "the daemon did not log the adapter's removal"
console | grep -q '^E2E-DAEMON: .*reopen.*done' || problem "the daemon did not log the adapter's reopen"
back=$(mark_time adapter-back)
t=$(first_message "$TOPIC_BASE/sighting/$IBEACON_ID" "$back")
within "$back" 10 "$t" || problem "no sighting within 10 s of the adapter's return (${t:-none})"
awk -v topic="$TOPIC_BASE/telemetry" '$2 == topic' "$MQTT_LOG" \
    | grep -qE '"[a-z_]*(reopen|restart|power_cycle)[a-z_]*":[1-9]' \
    || problem "telemetry never counted an adapter reopen/restart"
finish "adapter-restart scenario"
