# Scenario "extended": extended (non-legacy) advertising from hci1 arrives as LE Extended Advertising Report
# events (0x3E/0x0D) at a scanner using LE extended scanning on hci0, and decodes to the same beacon ids.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_extended_beacon_loop hci1 "$IBEACON_AD" "$EDDYSTONE_UID_AD"
beaconbridge scan --adapter hci0 --seconds 4 --extended on > /tmp/ext.out 2> /tmp/ext.err
status=$?
sed 's/^/E2E: scan stderr: /' /tmp/ext.err
head -n 4 /tmp/ext.out | sed 's/^/E2E-SCAN-extended: /'
[ "$status" = 0 ] || fail "scan --extended on exited $status"
grep -qE '^[0-9.]+ 3e..0d' /tmp/ext.out || fail "no LE Extended Advertising Report"
beaconbridge scan --adapter hci0 --seconds 3 --extended on --json > /tmp/ext.json 2>/dev/null || fail "scan --json"
grep -m1 '"extended":true.*ibeacon:' /tmp/ext.json | sed 's/^/E2E-SCAN-json: /'
grep -q '"extended":true.*"id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"' /tmp/ext.json || fail "iBeacon not decoded from an extended report"
grep -q '"extended":true.*"id":"eddystone-uid:edd1ebeac04e5defa017:0bdb87539b67"' /tmp/ext.json || fail "Eddystone-UID not decoded from an extended report"
stop_beacon_loop hci1
e2e "extended scenario passed"
