# Scenario "relay" (harness self-test): the guest reaches the host's test broker through the QEMU relay and
# nothing else, and the host stops and restarts the broker on request.
mqtt_publish e2e/relay before
host_directive broker-stop 2
mqtt_publish e2e/relay during
host_directive broker-start 2
mqtt_publish e2e/relay after
# restrict=on: the broker's real port on the host (10.0.2.2 is the host's loopback under user networking)
# and the outside world are unreachable; only the relay address is.
for target in "10.0.2.2 $E2E_BROKER_PORT" "10.0.2.2 22" "1.1.1.1 80"; do
    if echo | nc -w 2 $target > /dev/null 2>&1; then fail "the guest reached $target beyond the relay"; fi
done
e2e "unreachable as expected: 10.0.2.2:$E2E_BROKER_PORT, 10.0.2.2:22, 1.1.1.1:80"
e2e "relay scenario done"
