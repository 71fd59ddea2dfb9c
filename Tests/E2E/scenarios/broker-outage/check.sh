#!/usr/bin/env bash
# The enter and exit that happened while the broker was down arrive after it is back, enter before exit.
. "$(dirname "$0")/../../check-lib.sh"
topic="$TOPIC_BASE/region/office/$IBEACON_ID"
back=$(mark_time broker-starting)
enter=$(first_message "$topic" "$back" '"event":"enter"')
exit_time=$(first_message "$topic" "$back" '"event":"exit"')
within "$back" 10 "$enter" || problem "the buffered region enter did not arrive after the broker came back (${enter:-none})"
within "$back" 10 "$exit_time" || problem "the buffered region exit did not arrive after the broker came back (${exit_time:-none})"
awk -v topic="$topic" '$2 == topic' "$MQTT_LOG" | grep -o '"event":"[a-z]*"' | tr '\n' ' ' | grep -q '"enter".*"exit"' \
    || problem "enter and exit not in order on $topic"
finish "broker-outage scenario"
