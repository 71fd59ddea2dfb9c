# Issue 43 through the kernel: a region taught from reports that carry a level. Our controller vhci-beacon (hci0;
# btvirt's reports carry RSSI 127, "not available") reports the iBeacon at -70 dBm (+-1) while
# `beaconbridge regions teach` records the boundary, at -55 while it records inside; then the region follows the
# taught levels (enter -72, exit -77): -80 exits after the exit period, -58 enters, although the configured level
# (-40) is never reached.
device=ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2
teach() {
    local at="$1" status
    mark "teach-$at-start"
    beaconbridge regions teach --config ./config.yaml --region desk --device "$device" --at "$at" --seconds 8 \
        > "/tmp/teach-$at.log" 2>&1
    status=$?
    mark "teach-$at-end"
    sed "s/^/E2E-TEACH: $at: /" "/tmp/teach-$at.log"
    e2e "regions teach --at $at exited with status $status"
    [ "$status" = 0 ] || fail "regions teach --at $at exited $status"
}
start_vhci_beacon -i -70 -r 10
[ "$VHCI_BEACON_DEV" = hci0 ] || fail "vhci-beacon's controller is $VHCI_BEACON_DEV, the configuration scans hci0"
vhci_beacon "jitter 1"
start_daemon ./config.yaml
sleep 3
teach boundary
vhci_beacon "rssi -55"
teach inside
vhci_beacon "rssi -80"
mark rssi-80
sleep 12
vhci_beacon "rssi -58"
mark rssi-58
sleep 6
vhci_beacon "rssi -80"
mark rssi-80-again
sleep 12
mark stopping
stop_daemon
stop_vhci_beacon
e2e "teach scenario done"
