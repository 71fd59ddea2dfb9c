# Scenario 2 (issue 6): a region enter when advertising starts, and an exit after advertising stops and the
# exit period (5 s) passes.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
start_daemon ./config.yaml
sleep 2
mark advertising-start
start_beacon_loop hci1 "$IBEACON_AD"
sleep 5
stop_beacon_loop hci1
mark advertising-stop
sleep 10
stop_daemon
e2e "regions scenario done"
