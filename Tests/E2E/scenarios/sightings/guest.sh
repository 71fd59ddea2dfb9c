# Scenario 1 (issue 6): an iBeacon and an Eddystone-UID advertised from hci1 are published as sightings with
# the right ids within a few seconds of the daemon's start (timed from its `scanning` notice: start_daemon).
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_beacon_loop hci1 "$IBEACON_AD" "$EDDYSTONE_UID_AD"
start_daemon ./config.yaml
mark daemon-scanning
sleep 8
stop_beacon_loop hci1
stop_daemon
e2e "sightings scenario done"
