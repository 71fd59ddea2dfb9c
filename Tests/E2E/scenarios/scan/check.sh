#!/usr/bin/env bash
# Host-side assertion for scenario "scan": the guest printed LE Advertising Report events (HCI event 0x3E,
# subevent 0x02 or 0x0D) carrying the iBeacon and the Eddystone-UID, received on hci0 through the kernel.
set -u
log=$(tr -d '\r' < "$CONSOLE_LOG")
ok=0
grep -q 'E2E: scan stderr: beaconbridge scan: scanning on hci0' <<< "$log" || { echo "check: no 'scanning on hci0' notice"; ok=1; }
grep -E '^E2E-SCAN-(auto|off): [0-9.]+ 3e..0(2|d)' <<< "$log" | grep -q 4c000215e2c56db5 \
    || { echo "check: no LE Advertising Report with the iBeacon on the console"; ok=1; }
grep -q '^E2E-SCAN-json: .*"id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"' <<< "$log" \
    || { echo "check: the iBeacon was not decoded from the guest's reports"; ok=1; }
grep -q '^E2E-SCAN-json: .*"id":"eddystone-uid:edd1ebeac04e5defa017:0bdb87539b67"' <<< "$log" \
    || { echo "check: the Eddystone-UID was not decoded from the guest's reports"; ok=1; }
grep -q '^E2E: unprivileged: .*CAP_NET_RAW.*errno 1' <<< "$log" || { echo "check: no permission error from the kernel"; ok=1; }
grep -q 'E2E: scan scenario passed' <<< "$log" || { echo "check: guest did not confirm the scenario"; ok=1; }
[ $ok = 0 ] && echo "check: scan scenario OK"
exit $ok
