# Scenario "scan": beaconbridge scan on hci0 receives, through the guest kernel's HCI socket, the LE
# Advertising Reports of an iBeacon and an Eddystone-UID advertised from hci1 (btvirt, one virtual radio).
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
ADVERTISER=$(adapter_address hci1)
e2e "advertiser hci1 is $ADVERTISER; scanner adapter hci0 is left down for beaconbridge to bring up"
start_beacon_loop hci1 "$IBEACON_AD" "$EDDYSTONE_UID_AD"

for mode in auto off; do
    beaconbridge scan --adapter hci0 --seconds 4 --extended "$mode" --record "/tmp/scan-$mode.btsnoop" \
        > "/tmp/scan-$mode.out" 2> "/tmp/scan-$mode.err"
    status=$?
    sed 's/^/E2E: scan stderr: /' "/tmp/scan-$mode.err"
    head -n 6 "/tmp/scan-$mode.out" | sed "s/^/E2E-SCAN-$mode: /"
    [ "$status" = 0 ] || fail "beaconbridge scan --extended $mode exited $status"
    e2e "mode $mode: $(wc -l < "/tmp/scan-$mode.out") advertising events, iBeacon $(grep -c 4c000215e2c56db5 "/tmp/scan-$mode.out"), Eddystone-UID $(grep -c aafe00ecedd1ebeac04e5defa017 "/tmp/scan-$mode.out")"
    grep -q 4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5 "/tmp/scan-$mode.out" || fail "no iBeacon report ($mode)"
    grep -q aafe00ecedd1ebeac04e5defa0170bdb87539b67 "/tmp/scan-$mode.out" || fail "no Eddystone-UID report ($mode)"
    # The advertiser's address, little endian as HCI carries it, must be in the reports.
    le=$(echo "$ADVERTISER" | tr -d ':' | sed 's/\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/\6\5\4\3\2\1/' | tr 'A-F' 'a-f')
    grep -q "$le" "/tmp/scan-$mode.out" || fail "reports do not carry the advertiser address $ADVERTISER ($mode)"
    e2e "mode $mode: btsnoop recording $(wc -c < "/tmp/scan-$mode.btsnoop") bytes; btmon -r reads:"
    btmon -r "/tmp/scan-$mode.btsnoop" > "/tmp/btmon-$mode.txt" 2>&1
    grep -E 'Set (Extended )?Scan (Parameters|Enable)|Advertising Report' "/tmp/btmon-$mode.txt" | head -n 8 \
        | sed "s/^/E2E-BTMON-$mode: /"
    grep -q 'Advertising Report' "/tmp/btmon-$mode.txt" || fail "btmon -r found no advertising report ($mode)"
    # Replaying the recording gives back exactly the events printed live, timestamps included, in order. The
    # recording may end with a report or two more: the socket's tap records what the adapter sends while the scan
    # is being disabled (btvirt can send one right after LE Set Scan Enable off), after the printing stopped.
    beaconbridge scan --replay "/tmp/scan-$mode.btsnoop" > "/tmp/replay-$mode.out" 2>/dev/null || fail "replay ($mode)"
    live=$(wc -l < "/tmp/scan-$mode.out"); replayed=$(wc -l < "/tmp/replay-$mode.out")
    head -n "$live" "/tmp/replay-$mode.out" > "/tmp/replay-$mode.head"
    cmp -s "/tmp/scan-$mode.out" "/tmp/replay-$mode.head" || fail "replay of the recording differs from the live output ($mode)"
    [ $((replayed - live)) -le 2 ] || fail "the recording holds $((replayed - live)) reports more than printed live ($mode)"
    e2e "mode $mode: replay of the recording matches the live output ($live events; $((replayed - live)) more recorded while stopping)"
done
# Decoded: the same reports as JSON with the beacon ids.
beaconbridge scan --adapter hci0 --seconds 3 --json > /tmp/scan-json.out 2> /tmp/scan-json.err || fail "scan --json"
grep -m1 ibeacon: /tmp/scan-json.out | sed 's/^/E2E-SCAN-json: /'
grep -m1 eddystone-uid: /tmp/scan-json.out | sed 's/^/E2E-SCAN-json: /'
grep -q '"id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"' /tmp/scan-json.out || fail "iBeacon id not decoded"
grep -q '"id":"eddystone-uid:edd1ebeac04e5defa017:0bdb87539b67"' /tmp/scan-json.out || fail "Eddystone-UID id not decoded"
# Errors at start, from the real kernel: an absent adapter, and a user without CAP_NET_RAW/CAP_NET_ADMIN.
beaconbridge scan --adapter hci7 --seconds 1 > /dev/null 2> /tmp/absent.err
status=$?
sed 's/^/E2E: absent adapter: /' /tmp/absent.err
[ "$status" = 69 ] && grep -q 'hci7 not found' /tmp/absent.err || fail "absent adapter: status $status"
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >> /etc/passwd
su -s /bin/sh nobody -c 'beaconbridge scan --adapter hci0 --seconds 1' > /dev/null 2> /tmp/unprivileged.err
status=$?
sed 's/^/E2E: unprivileged: /' /tmp/unprivileged.err
[ "$status" = 69 ] && grep -q 'CAP_NET_RAW' /tmp/unprivileged.err || fail "unprivileged: status $status"
hciconfig hci0 down
su -s /bin/sh nobody -c 'beaconbridge scan --adapter hci0 --seconds 1' > /dev/null 2> /tmp/down.err
status=$?
sed 's/^/E2E: adapter down, unprivileged: /' /tmp/down.err
[ "$status" = 69 ] && grep -q 'hci0 is down' /tmp/down.err || fail "adapter down: status $status"
stop_beacon_loop hci1
e2e "scan scenario passed"
