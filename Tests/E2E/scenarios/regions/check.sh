#!/usr/bin/env bash
# Enter within 6 s of advertising's start; exit after the exit period (5 s) and within 12 s of its stop.
. "$(dirname "$0")/../../check-lib.sh"
topic="$TOPIC_BASE/region/office/$IBEACON_ID"
started=$(mark_time advertising-start); stopped=$(mark_time advertising-stop)
enter=$(first_message "$topic" "$started" '"event":"enter"')
within "$started" 6 "$enter" || problem "no region enter within 6 s of advertising's start (${enter:-none})"
exit_time=$(first_message "$topic" "$stopped" '"event":"exit"')
within "$stopped" 12 "$exit_time" || problem "no region exit within 12 s of advertising's stop (${exit_time:-none})"
if [ -n "$exit_time" ] && within "$stopped" 4 "$exit_time"; then
    problem "exit came before the exit period passed ($exit_time, advertising stopped at $stopped)"
fi
finish "regions scenario"
