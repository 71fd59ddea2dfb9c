#!/usr/bin/env bash
# Host-side assertion for scenario "supervision": the console shows each supervision step and its success.
set -u
log=$(tr -d '\r' < "$CONSOLE_LOG")
ok=0
for pattern in 'scanning on hci0' 'supervision: scan restart because no advertising report' \
    'supervision: adapter power cycle (attempt 1) done, scanning again' \
    'supervision: adapter reopen (attempt 1) because adapter removed' \
    'supervision: adapter reopen (attempt [0-9]*) done, scanning again' 'E2E: supervision scenario passed'; do
    grep -q "$pattern" <<< "$log" || { echo "check: missing on the console: $pattern"; ok=1; }
done
[ $ok = 0 ] && echo "check: supervision scenario OK"
exit $ok
