# BeaconBridge E2E guest helpers, sourced before each scenario's guest.sh (busybox sh).

# Advertising data (AD structures) of the test beacons, hex.
# iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2, measured power -59.
IBEACON_AD=0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5
# Eddystone-UID namespace edd1ebeac04e5defa017 instance 0bdb87539b67, tx power at 0 m -20.
EDDYSTONE_UID_AD=0201060303aafe1716aafe00ecedd1ebeac04e5defa0170bdb87539b670000

e2e() { echo "E2E: $*"; }
fail() { echo "E2E: FAIL: $*"; exit 1; }

# "0a0b" -> "0a 0b"
hex_bytes() { echo "$1" | sed 's/../& /g'; }

# Starts btvirt with $1 (default 2) controllers and waits for hci0..hci<n-1>.
start_btvirt() {
    local count="${1:-2}" i
    btvirt -l"$count" > /tmp/btvirt.log 2>&1 &
    BTVIRT_PID=$!
    for i in $(seq 1 100); do
        [ -e "/sys/class/bluetooth/hci$((count - 1))" ] && break
        sleep 0.05
    done
    [ -e "/sys/class/bluetooth/hci$((count - 1))" ] || fail "btvirt did not create $count controllers"
    e2e "btvirt (pid $BTVIRT_PID) created: $(ls /sys/class/bluetooth | tr '\n' ' ')"
}

stop_btvirt() { kill "$BTVIRT_PID" 2>/dev/null; wait "$BTVIRT_PID" 2>/dev/null; }

# The controller address of $1 (hciconfig), e.g. 00:AA:01:01:00:01.
adapter_address() { hciconfig "$1" | sed -n 's/.*BD Address: \([0-9A-F:]*\).*/\1/p'; }

# Legacy advertising from $1: parameters (non-connectable, 100 ms), then data $2 (hex AD structures).
advertise() {
    local dev="$1" data="$2" len pad
    len=$(( ${#data} / 2 ))
    pad=$(( 31 - len ))
    hcitool -i "$dev" cmd 0x08 0x000a 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0008 $(printf '%02x' "$len") $(hex_bytes "$data") $(yes 00 | head -n "$pad") > /dev/null
    hcitool -i "$dev" cmd 0x08 0x000a 01 > /dev/null
}

stop_advertising() { hcitool -i "$1" cmd 0x08 0x000a 00 > /dev/null; }

# Background loop: cycles advertising data on $1 through the remaining arguments every ~0.5 s, re-enabling
# each time (btvirt sends a report only when advertising or scanning is re-enabled). Sets BEACON_LOOP_PID.
start_beacon_loop() { run_beacon_loop advertise "" "$@"; }

# The loop itself: $1 is the function that sets and enables the advertising data, $2 a word for the log.
run_beacon_loop() {
    local advertise_with="$1" kind="$2" dev="$3"; shift 3
    (
        while :; do
            for data in "$@"; do "$advertise_with" "$dev" "$data"; sleep 0.25; done
        done
    ) &
    BEACON_LOOP_PID=$!
    e2e "${kind}advertising from $dev (pid $BEACON_LOOP_PID): $*"
}

stop_beacon_loop() { kill "$BEACON_LOOP_PID" 2>/dev/null; wait "$BEACON_LOOP_PID" 2>/dev/null; stop_advertising "$1"; }

# Starts `beaconbridge run --config $1` in the background (log: /tmp/daemon.log); sets DAEMON_PID and prints
# the wall-clock start (the host compares it with the arrival times in mqtt.log). Then waits until the daemon
# logs that it scans (`msg=scanning`), at most 120 s, and prints how long that took: scenarios time their steps
# from there. Under TCG on a loaded host the start took 6-8 s (a stressed run, session 11), longer than the
# fixed sleeps the scenarios had, so the adapter was removed before the daemon had opened it. A daemon that
# exits first is left to stop_daemon, which reports its status.
start_daemon() {
    local started waited=0
    beaconbridge run --config "$1" > /tmp/daemon.log 2>&1 &
    DAEMON_PID=$!
    started=$(date +%s)
    echo "E2E: daemon (pid $DAEMON_PID) started at unix $started"
    while ! grep -q 'msg=scanning' /tmp/daemon.log; do
        kill -0 "$DAEMON_PID" 2>/dev/null || { e2e "daemon exited before it scanned"; return 0; }
        [ "$waited" -lt 1200 ] || fail "the daemon did not scan within 120 s of its start"
        sleep 0.1
        waited=$((waited + 1))
    done
    e2e "daemon scanning $(( $(date +%s) - started )) s after its start"
}

# SIGTERM, wait, print the daemon's log on the console (E2E-DAEMON: lines); fails unless it exited 0.
stop_daemon() {
    local status
    kill -TERM "$DAEMON_PID" 2>/dev/null
    wait "$DAEMON_PID"
    status=$?
    sed 's/^/E2E-DAEMON: /' /tmp/daemon.log
    e2e "daemon exited with status $status"
    [ "$status" = 0 ] || fail "beaconbridge run exited $status"
}

# Prints a directive the host harness acts on (see scripts/e2e/host-lib.sh), then gives it time to act.
host_directive() { echo "E2E-HOST: $1"; sleep "${2:-1}"; }

# Prints the wall-clock time of an event for the host's check (E2E-MARK: <name> <unix seconds>).
mark() { echo "E2E-MARK: $1 $(date +%s)"; }

# Publishes $2 to topic $1 (QoS 0) on the host's test broker through the relay at 10.0.2.100:1883 with a
# hand-made MQTT 3.1.1 CONNECT / PUBLISH / DISCONNECT (busybox nc); the broker's CONNACK is discarded.
# Topic and payload: at most 100 bytes together.
mqtt_publish() {
    local topic="$1" payload="$2" oct
    oct() { printf '\\%03o' "$1"; }
    {
        printf "\020\016\000\004MQTT\004\002\000\074\000\002e2"
        printf "$(oct 48)$(oct $(( 2 + ${#topic} + ${#payload} )))$(oct 0)$(oct ${#topic})"
        printf '%s%s' "$topic" "$payload"
        printf "\340\000"
        sleep 1
    } | nc 10.0.2.100 1883 > /dev/null 2>&1
}

# Extended advertising (LE Set Extended Advertising Parameters/Data/Enable, set 0, non-legacy, non-connectable,
# 1M primary and secondary PHY) from $1 with data $2 (hex AD structures). A controller that saw extended
# advertising commands rejects the legacy ones (0x0C), so use a controller for one kind only.
advertise_extended() { advertise_extended_set "$1" "$2" 00; }

# Advertising set 0 from $1 with data $2 and event properties $3 (the low byte; 00 extended non-connectable,
# 13 legacy ADV_IND), 100 ms, then enabled.
advertise_extended_set() {
    local dev="$1" data="$2" properties="$3" len
    len=$(( ${#data} / 2 ))
    hcitool -i "$dev" cmd 0x08 0x0039 00 01 00 00 00 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0036 00 "$properties" 00 a0 00 00 a0 00 00 07 00 00 00 00 00 00 00 00 00 7f 01 00 01 00 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0037 00 03 01 $(printf '%02x' "$len") $(hex_bytes "$data") > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0039 01 01 00 00 00 00 > /dev/null
}

# Like start_beacon_loop, with extended advertising.
start_extended_beacon_loop() { run_beacon_loop advertise_extended "extended " "$@"; }

# Connectable undirected advertising of the iBeacon from advertising set 0 (LE Set Extended Advertising
# Parameters with legacy ADV_IND properties 0x0013, 100 ms), re-enabled every 0.25 s as the beacon loop does
# (btvirt reports only on a (re-)enable). Extended commands, not the legacy ones: the kernel connects from hci0
# with LE Extended Create Connection (btvirt supports it), which btvirt completes only toward an extended
# advertising set; with legacy advertising it never answered (the kernel cancelled after about 4 s).
advertise_connectable() { advertise_extended_set "$1" "$2" 13; }

# Our own LE controller on /dev/vhci (scripts/e2e/vhci-beacon.c): while the host scans it reports the iBeacon
# ($IBEACON_AD, from 00:AA:BE:AC:00:01) with the RSSI it is told; btvirt's reports carry 127 ("not available").
# Starts it with the options $@ (e.g. -i -70 -r 10), control FIFO /tmp/vhci-beacon.ctl, log /tmp/vhci-beacon.log;
# waits until the kernel registered it and sets VHCI_BEACON_PID and VHCI_BEACON_DEV (hciN).
start_vhci_beacon() {
    local i
    rm -f /tmp/vhci-beacon.ctl /tmp/vhci-beacon.out
    mkfifo /tmp/vhci-beacon.ctl || fail "mkfifo /tmp/vhci-beacon.ctl"
    vhci-beacon -c /tmp/vhci-beacon.ctl "$@" > /tmp/vhci-beacon.out 2> /tmp/vhci-beacon.log &
    VHCI_BEACON_PID=$!
    for i in $(seq 1 100); do
        VHCI_BEACON_DEV=$(sed -n 's/^vhci-beacon: \(hci[0-9]*\)$/\1/p' /tmp/vhci-beacon.out)
        [ -n "$VHCI_BEACON_DEV" ] && [ -e "/sys/class/bluetooth/$VHCI_BEACON_DEV" ] && break
        kill -0 "$VHCI_BEACON_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$VHCI_BEACON_DEV" ] || { sed 's/^/E2E-VHCI: /' /tmp/vhci-beacon.log; fail "vhci-beacon created no controller"; }
    e2e "vhci-beacon (pid $VHCI_BEACON_PID) created $VHCI_BEACON_DEV: $*"
}

# Sends one control line to vhci-beacon: `rssi N`, `jitter N`, `stop`, `go` (the FIFO has a reader while it runs).
vhci_beacon() {
    kill -0 "$VHCI_BEACON_PID" 2>/dev/null || fail "vhci-beacon is not running (control: $*)"
    echo "$*" > /tmp/vhci-beacon.ctl
    e2e "vhci-beacon: $*"
}

# Stops vhci-beacon (`quit`; its controller goes away) and prints its log as E2E-VHCI: lines.
stop_vhci_beacon() {
    kill -0 "$VHCI_BEACON_PID" 2>/dev/null && echo quit > /tmp/vhci-beacon.ctl
    wait "$VHCI_BEACON_PID"
    e2e "vhci-beacon exited with status $?"
    sed 's/^/E2E-VHCI: /' /tmp/vhci-beacon.log
}
