# Issue 31: the ESPHome proxy's active connections through the kernel. The daemon scans on hci0 and serves the
# ESPHome API on 6053 with gatt enabled; the test peripheral (beaconbridge-testpeer) on hci1 advertises the
# connectable iBeacon. The guest asks the host (E2E-HOST: esphome-client) to run client.py with the pinned
# aioesphomeapi against the forwarded port: it connects to the peripheral through the proxy, lists the services,
# reads the battery (87) and the firmware ("1.2.3-e2e"), writes the writable characteristic and receives its
# notification, disconnects and sees the slots freed. The guest waits until that client has gone, then stops.
start_btvirt 2
hciconfig hci1 up || fail "hci1 up"
hciconfig hci0 up || fail "hci0 up"
PEER=$(adapter_address hci1)
beaconbridge-testpeer --adapter hci1 --firmware 1.2.3-e2e --battery 87 --connections 3 --seconds 250 \
    > /tmp/testpeer.log 2>&1 &
PEER_PID=$!
run_beacon_loop advertise_connectable "connectable " hci1 "$IBEACON_AD"
start_daemon ./config.yaml
grep -q 'msg="ESPHome API listening"' /tmp/daemon.log || fail "the ESPHome API is not listening"
sleep 2
mark esphome-client-start
host_directive "esphome-client $PEER" 1
# The client comes (through the forward) and goes; at most 200 s.
waited=0
until grep -qE 'msg="client (disconnected|closed)"' /tmp/daemon.log; do
    [ "$waited" -lt 2000 ] || { e2e "the API client did not come and go within 200 s"; break; }
    sleep 0.1
    waited=$((waited + 1))
done
mark esphome-client-end
sleep 3
mark after-esphome
kill "$BEACON_LOOP_PID" 2>/dev/null; wait "$BEACON_LOOP_PID" 2>/dev/null
kill "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null
sed 's/^/E2E: peer: /' /tmp/testpeer.log
grep -E 'msg="(client|device)' /tmp/daemon.log | sed 's/^/E2E: proxy: /'
stop_daemon
e2e "esphome-gatt scenario done"
