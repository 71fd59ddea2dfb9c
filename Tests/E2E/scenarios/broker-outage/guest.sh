# Scenario 4 (issue 6): the broker on the host is stopped during advertising and restarted: the buffered
# region events arrive.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_daemon ./config.yaml
sleep 3
host_directive broker-stop 2
mark broker-stopped
start_beacon_loop hci1 "$IBEACON_AD"
sleep 4
stop_beacon_loop hci1
sleep 7
mark broker-starting
host_directive broker-start 1
sleep 8
stop_daemon
e2e "broker-outage scenario done"
