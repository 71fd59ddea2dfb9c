# Issue 31: `beaconbridge gatt` on hci0 connects through the kernel's L2CAP ATT channel to the test peripheral
# (beaconbridge-testpeer) on hci1, which advertises connectable (ADV_IND) with the iBeacon, while the daemon
# scans on hci0 and publishes the beacon's sightings. Reads the firmware revision and the battery level, holds a
# connection open for a few seconds (sightings must keep flowing during it), writes the custom characteristic and
# receives its notification, and sees a connect to an absent device time out with exit 75.
CUSTOM=6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
hciconfig hci0 up || fail "hci0 up"
PEER=$(adapter_address hci1)
btmon > /tmp/btmon.txt 2>&1 &
BTMON_PID=$!
beaconbridge-testpeer --adapter hci1 --firmware 1.2.3-e2e --battery 87 --connections 3 --seconds 200 \
    > /tmp/testpeer.log 2>&1 &
PEER_PID=$!

# advertise_connectable: scripts/e2e/guest-lib.sh (shared with the esphome-gatt scenario).
run_beacon_loop advertise_connectable "connectable " hci1 "$IBEACON_AD"
start_daemon ./config.yaml
mark daemon-scanning
sleep 3

gatt() {  # gatt NAME ARGS...: runs `beaconbridge gatt --adapter hci0 --address $PEER ARGS`, prints its output
    local name="$1"; shift
    beaconbridge gatt --adapter hci0 --address "$PEER" "$@" > "/tmp/$name.out" 2> "/tmp/$name.err"
    GATT_STATUS=$?
    sed "s/^/E2E: $name stdout: /" "/tmp/$name.out"
    sed "s/^/E2E: $name stderr: /" "/tmp/$name.err"
    e2e "$name exit $GATT_STATUS"
    [ "$name" = read ] && btmon_summary
}
# The HCI commands and events on both controllers so far, one line each with their status (the kernel's side).
btmon_summary() {
    awk '/^[<>] HCI/ { if (line) print line; line = $0; next }
         /Status:|Reason:|Subevent|LE Connection Complete|Scanning:|Advertising:|Role:/ { gsub(/^ +/, ""); line = line " | " $0 }
         END { if (line) print line }' /tmp/btmon.txt | grep -v 'LE Advertising Report\|LE Set Advertis' | tail -n 60 | sed 's/^/E2E: btmon: /'
}

mark gatt-read
gatt read read 2a26 2a19
[ "$GATT_STATUS" = 0 ] || fail "gatt read exited $GATT_STATUS"
grep -qx '2a26 312e322e332d653265 "1.2.3-e2e"' /tmp/read.out || fail "firmware revision not read as 1.2.3-e2e"
grep -qx '2a19 57' /tmp/read.out || fail "battery level not read as 87 (0x57)"

mark gatt-hold-start
gatt hold subscribe 2a19 --seconds 6
mark gatt-hold-end
[ "$GATT_STATUS" = 0 ] || fail "gatt subscribe (hold) exited $GATT_STATUS"

mark gatt-write
gatt write write-and-wait "$CUSTOM" cafe01 --count 1 --seconds 10
[ "$GATT_STATUS" = 0 ] || fail "gatt write-and-wait exited $GATT_STATUS"
grep -qx "written $CUSTOM cafe01" /tmp/write.out || fail "the write was not confirmed"
grep -qx "notification $CUSTOM cafe01" /tmp/write.out || fail "no notification of the written value"

mark gatt-absent
gatt absent --connect-timeout 3 read 2a19 --address 00:AA:01:09:09:09
[ "$GATT_STATUS" = 75 ] || fail "a connect to an absent device exited $GATT_STATUS, not 75"
grep -q 'connect timed out after 3.0 s' /tmp/absent.err || fail "the absent device's error does not name the connect timeout"

# Secure DFU (issue 31) through the kernel to the test peripheral's DFU target: a wrong package is refused
# before any connection (65), then a 12 KiB image goes over with progress, the target drops the link once after
# 5,000 bytes, `gatt dfu` reconnects and resumes, and the target's CRC check passes. Sightings keep flowing
# (check.sh counts them between the dfu-start and dfu-end marks).
dfu_steps() {
    beaconbridge-testpeer --write-package /tmp/app.zip --image-bytes 12288 --package-version 2 > /tmp/package.out \
        || fail "the test package was not written"
    sed 's/^/E2E: /' /tmp/package.out
    local crc
    crc=$(sed -n 's/.* crc=\([0-9a-f]*\) .*/\1/p' /tmp/package.out)
    [ -n "$crc" ] || fail "no CRC in the package line"
    kill "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null
    sed 's/^/E2E: peer: /' /tmp/testpeer.log
    beaconbridge-testpeer --adapter hci1 --firmware 1 --dfu --dfu-expect-crc "$crc" --dfu-drop-after 5000 \
        --connections 4 --seconds 150 > /tmp/testpeer-dfu.log 2>&1 &
    PEER_PID=$!
    sleep 1

    printf 'not a zip at all' > /tmp/wrong.zip
    mark dfu-wrong
    gatt dfu-wrong dfu --package /tmp/wrong.zip
    [ "$GATT_STATUS" = 65 ] || fail "a wrong package exited $GATT_STATUS, not 65"
    grep -q 'connecting' /tmp/dfu-wrong.err && fail "a wrong package was refused only after connecting"

    mark dfu-start
    gatt dfu dfu --package /tmp/app.zip --connect-timeout 10
    mark dfu-end
    [ "$GATT_STATUS" = 0 ] || fail "gatt dfu exited $GATT_STATUS"
    local percents
    percents=$(sed -n 's/^progress \([0-9]*\)% .*/\1/p' /tmp/dfu.out | tr '\n' ' ')
    e2e "dfu progress percents: $percents"
    echo "$percents" | awk '{ for (i = 2; i <= NF; i++) if ($i <= $(i-1)) exit 1; if (NF < 3) exit 1 }' \
        || fail "progress did not increase in at least 3 events ($percents)"
    grep -q "^dfu complete 12288 bytes crc $crc " /tmp/dfu.out || fail "gatt dfu did not report the whole image complete"
    grep -q '^reconnecting 1 ' /tmp/dfu.out || fail "the dropped connection was not followed by a reconnect"
    sleep 1
    kill "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null
    sed 's/^/E2E: peer: /' /tmp/testpeer-dfu.log
    grep -q 'dfu dropping the connection after' /tmp/testpeer-dfu.log || fail "the target never dropped the link"
    grep -q "dfu-complete crc=$crc size=12288 ok" /tmp/testpeer-dfu.log || fail "the target's CRC check did not pass"
}
# --- The daemon's own GATT commands and Secure DFU over MQTT (issue 31, branch dfud) -------------------------
# The daemon is restarted with `gatt` on and the test peripheral configured as device `peer` with a package
# (`firmware:`); the peripheral serves Device Information 1.2.3-e2e, Battery 87, the writable characteristic
# and a DFU target checking the package's CRC (160 KiB: 6-40 s through btvirt, long enough to count the
# sightings meanwhile). Commands go to the host's broker (published from here through the relay); the host's
# check.sh reads the replies, the progress, the update entity's states and the Home Assistant discovery from
# mqtt.log, and writes them to daemon-gatt.jsonl (the source of the Home Assistant stage's fixture).
# daemon_publish TOPIC PAYLOAD: QoS 0 PUBLISH with a two-byte remaining length (mqtt_publish takes 100 bytes).
daemon_publish() {
    local topic="$1" payload="$2" length
    length=$(( 2 + ${#topic} + ${#payload} ))
    {
        printf "\020\016\000\004MQTT\004\002\000\074\000\002e3"
        if [ "$length" -lt 128 ]; then
            printf "\060$(printf '\\%03o' "$length")"
        else
            printf "\060$(printf '\\%03o' $(( length % 128 + 128 )))$(printf '\\%03o' $(( length / 128 )))"
        fi
        printf "\000$(printf '\\%03o' ${#topic})%s%s" "$topic" "$payload"
        printf "\340\000"
        sleep 1
    } | nc 10.0.2.100 1883 > /dev/null 2>&1
}
# daemon_wait PATTERN SECONDS: waits until the daemon's log has a line matching PATTERN (grep -E).
daemon_wait() {
    local waited=0
    while ! grep -qE "$1" /tmp/daemon.log; do
        [ "$waited" -lt $(( $2 * 10 )) ] || { sed 's/^/E2E-DAEMON: /' /tmp/daemon.log | tail -n 30; fail "the daemon did not log /$1/ within $2 s"; }
        sleep 0.1
        waited=$((waited + 1))
    done
}
daemon_gatt_steps() {
    local crc base=beaconbridge/e2e/command
    mkdir -p /tmp/fw
    beaconbridge-testpeer --write-package /tmp/fw/peer-app.zip --image-bytes 163840 --package-version 2 \
        > /tmp/fw/package.out || fail "the daemon's test package was not written"
    sed 's/^/E2E: daemon dfu /' /tmp/fw/package.out
    crc=$(sed -n 's/.* crc=\([0-9a-f]*\) .*/\1/p' /tmp/fw/package.out)
    [ -n "$crc" ] || fail "no CRC in the daemon package line"
    stop_daemon
    beaconbridge-testpeer --adapter hci1 --firmware 1.2.3-e2e --battery 87 --dfu --dfu-expect-crc "$crc" \
        --connections 12 --seconds 150 > /tmp/testpeer-daemon.log 2>&1 &
    PEER_PID=$!
    { cat ./config.yaml; printf '%s\n' \
        'topics:' '  home_assistant:' '    enabled: true' \
        'gatt:' '  enabled: true' '  connect_timeout_s: 10' '  devices:' '    - name: peer' \
        "      address: $PEER" '      interval_s: 3600' '      firmware: /tmp/fw/peer-app.zip'; } > /tmp/daemon-gatt.yaml
    mark daemon-gatt-start
    start_daemon /tmp/daemon-gatt.yaml
    # The device information schedule's first read (10 s after the start): the firmware and battery sensors.
    daemon_wait 'msg="device information".*device=peer' 40
    e2e "daemon read the device information: $(grep 'msg="device information"' /tmp/daemon.log | head -1)"
    mark daemon-read
    daemon_publish "$base/gatt/read" '{"id":"e2e-read","device":"peer","uuid":"2a19"}'
    daemon_wait 'msg="gatt command done".*id=e2e-read' 30
    mark daemon-write
    daemon_publish "$base/gatt/write" \
        '{"id":"e2e-write","device":"peer","uuid":"6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10","value":"cafe02"}'
    daemon_wait 'msg="gatt command done".*id=e2e-write' 30
    # The update entity's install button (the same update as the `dfu` op; a second dfu while it runs is busy).
    mark daemon-dfu-start
    daemon_publish "$base/update/peer" 'install'
    daemon_wait 'msg="firmware update started"' 20
    daemon_publish "$base/gatt/dfu" '{"id":"e2e-dfu-again","device":"peer"}'
    daemon_wait 'msg="firmware update complete"|msg="gatt command failed".*id=install-peer' 120
    daemon_wait 'msg="firmware update complete"' 5
    mark daemon-dfu-end
    sleep 2
    kill "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null
    sed 's/^/E2E: daemon peer: /' /tmp/testpeer-daemon.log
    grep -q 'written .*cafe02\|write .*cafe02' /tmp/testpeer-daemon.log || e2e "(the peer does not log writes)"
    grep -q "dfu-complete crc=$crc size=163840 ok" /tmp/testpeer-daemon.log \
        || fail "the target's CRC check of the daemon's update did not pass"
    echo "E2E-DFUD: crc=$crc"
}
dfu_steps
daemon_gatt_steps

sleep 4
mark after-gatt
kill "$BEACON_LOOP_PID" 2>/dev/null; wait "$BEACON_LOOP_PID" 2>/dev/null
hcitool -i hci1 cmd 0x08 0x0039 00 01 00 00 00 00 > /dev/null
kill "$BTMON_PID" 2>/dev/null; wait "$BTMON_PID" 2>/dev/null
# What the kernel did on the controllers around the connections (scan and connection commands and events).
grep -E 'LE Set Scan Enable|LE Set Extended Scan Enable|LE Create Connection|LE Extended Create Connection|LE (Enhanced )?Connection Complete|Disconnect' /tmp/btmon.txt \
    | head -60 | sed 's/^/E2E: btmon: /'
grep -A2 -E 'Scan Enable \(0x08\|0x0(00c|042)' /tmp/btmon.txt | grep -E 'Scanning|Extended scan' | head -30 | sed 's/^/E2E: btmon scan: /'
stop_daemon
e2e "gatt scenario done"
