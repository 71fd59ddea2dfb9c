# Scenario "supervision": one `beaconbridge scan` process keeps scanning hci0 while (1) advertising stops
# (stall -> scan restart -> adapter power cycle), (2) advertising resumes, (3) the controllers disappear
# (btvirt killed -> reads fail -> reopen with backoff) and come back. Reports must resume each time.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_beacon_loop hci1 "$IBEACON_AD"
beaconbridge scan --adapter hci0 --seconds 60 --stall-timeout 2 > /tmp/scan.out 2> /tmp/scan.err &
SCAN_PID=$!

# Waits up to $2 seconds for /tmp/scan.out to exceed $1 lines.
wait_reports() {
    local i
    for i in $(seq 1 $(( $2 * 10 ))); do
        [ "$(wc -l < /tmp/scan.out)" -gt "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
# Waits up to $2 seconds for a stderr line matching $1.
wait_notice() {
    local i
    for i in $(seq 1 $(( $2 * 10 ))); do
        grep -q "$1" /tmp/scan.err && return 0
        sleep 0.1
    done
    return 1
}

wait_reports 2 15 || fail "no reports at start"
e2e "phase 1: $(wc -l < /tmp/scan.out) reports"

stop_beacon_loop hci1
wait_notice "scan restart because no advertising report" 10 || fail "no scan restart after a stall"
wait_notice "power cycle (attempt 1) because no advertising report" 10 || fail "no power cycle after a second stall"
wait_notice "power cycle (attempt 1) done" 10 || fail "power cycle did not complete"
e2e "phase 2: stall handled: restart, then power cycle"

before=$(wc -l < /tmp/scan.out)
start_beacon_loop hci1 "$IBEACON_AD"
wait_reports "$before" 15 || fail "no reports after advertising resumed"
e2e "phase 3: reports resumed ($(wc -l < /tmp/scan.out) total)"

# An adapter reset by someone else (the controller forgets it was scanning, nothing tells the socket):
# the stall timeout notices and the scan is restarted.
restarts=$(grep -c "scan restart done" /tmp/scan.err)
hciconfig hci0 reset || fail "hciconfig hci0 reset"
for i in $(seq 1 100); do
    [ "$(grep -c "scan restart done" /tmp/scan.err)" -gt "$restarts" ] && break
    sleep 0.1
done
[ "$(grep -c "scan restart done" /tmp/scan.err)" -gt "$restarts" ] || fail "no scan restart after the adapter reset"
before=$(wc -l < /tmp/scan.out)
wait_reports "$before" 15 || fail "no reports after the adapter reset"
e2e "phase 3b: adapter reset by hciconfig: scan restarted, reports resumed ($(wc -l < /tmp/scan.out) total)"

stop_beacon_loop hci1
stop_btvirt
wait_notice "adapter reopen (attempt 1) because adapter removed" 10 || fail "adapter removal not detected"
e2e "phase 4: controllers removed: $(ls /sys/class/bluetooth 2>/dev/null | tr '\n' ' ')"
sleep 2
start_btvirt 2
hciconfig hci1 up || fail "hci1 up after btvirt restart"
before=$(wc -l < /tmp/scan.out)
start_beacon_loop hci1 "$IBEACON_AD"
wait_notice "adapter reopen (attempt [0-9]*) done" 20 || fail "adapter not reopened"
wait_reports "$before" 20 || fail "no reports after the adapter came back"
e2e "phase 5: adapter back, reports resumed ($(wc -l < /tmp/scan.out) total)"

stop_beacon_loop hci1
kill -INT "$SCAN_PID"
wait "$SCAN_PID"
status=$?
sed 's/^/E2E: scan stderr: /' /tmp/scan.err
[ "$status" = 0 ] || fail "scan exited $status"
e2e "supervision scenario passed"
