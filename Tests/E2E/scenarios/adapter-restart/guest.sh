# Scenario 3 (issue 6): the adapter disappears (btvirt stopped) and comes back: the daemon logs it, reports it
# in telemetry, and resumes publishing without a restart.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_beacon_loop hci1 "$IBEACON_AD"
start_daemon ./config.yaml
sleep 4
stop_beacon_loop hci1
stop_btvirt
mark adapter-removed
e2e "controllers removed"
sleep 3
start_btvirt 2
hciconfig hci1 up || fail "hci1 up after btvirt restart"
mark adapter-back
start_beacon_loop hci1 "$IBEACON_AD"
sleep 8
stop_beacon_loop hci1
stop_daemon
e2e "adapter-restart scenario done"
