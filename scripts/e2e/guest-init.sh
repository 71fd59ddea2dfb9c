#!/bin/busybox sh
# BeaconBridge E2E guest init (PID 1): mounts, loads the Bluetooth modules, brings up the network to the host
# relay, runs /e2e/scenarios/<e2e.scenario>/guest.sh, prints E2E-EXIT=<status> and powers off.
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
export PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
echo "E2E: init at uptime $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)"
for module in $(cat /lib/modules/load-order); do
    insmod "/lib/modules/$module" || echo "E2E: insmod $module failed"
done
ip link set lo up
if ip link set eth0 up 2>/dev/null; then
    ip addr add 10.0.2.15/24 dev eth0
    ip route add default via 10.0.2.2
fi
scenario=$(sed -n 's/.*e2e\.scenario=\([^ ]*\).*/\1/p' /proc/cmdline)
# The broker's port on the host, for tests that prove it is NOT reachable directly.
export E2E_BROKER_PORT=$(sed -n 's/.*e2e\.broker_port=\([0-9]*\).*/\1/p' /proc/cmdline)
echo "E2E: modules loaded at uptime $(cut -d' ' -f1 /proc/uptime) s, running scenario '$scenario'"
status=1
if [ -f "/e2e/scenarios/$scenario/guest.sh" ]; then
    cd "/e2e/scenarios/$scenario" && sh -c '. /e2e/guest-lib.sh && . ./guest.sh'
    status=$?
else
    echo "E2E: no guest script for scenario '$scenario'"
fi
echo "E2E: scenario done at uptime $(cut -d' ' -f1 /proc/uptime) s"
echo "E2E-EXIT=$status"
sync
poweroff -f
