"""Host side of the esphome-gatt scenario: the pinned aioesphomeapi (the client Home Assistant uses) against the
guest's ESPHome proxy, through the proxy to the test peripheral on the guest's hci1. Prints PASS/FAIL per step
with what it saw; the exit status is the number of failures (any exception counts as one).

    python client.py HOST PORT PERIPHERAL_ADDRESS
"""
import asyncio
import sys

from aioesphomeapi import APIClient
from aioesphomeapi.model import BluetoothProxyFeature

HOST, PORT, PEER = sys.argv[1], int(sys.argv[2]), sys.argv[3]
CUSTOM = "6e4a0002-8f7b-4c8e-9d15-3b1e2c0a7f10"
BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"
FIRMWARE = "00002a26-0000-1000-8000-00805f9b34fb"
CCCD = "00002902-0000-1000-8000-00805f9b34fb"
FAILURES = []


def check(name, ok, detail=""):
    print(("PASS" if ok else "FAIL") + f": {name}" + (f" ({detail})" if detail else ""), flush=True)
    if not ok:
        FAILURES.append(name)
    return ok


async def until(condition, seconds):
    """Polls condition() every 50 ms for at most `seconds`."""
    for _ in range(int(seconds * 20)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


async def main():
    client = APIClient(HOST, PORT, None, client_info="beaconbridge-e2e")
    for attempt in range(30):
        try:
            await client.connect(login=True)
            break
        except Exception as error:  # the forward may accept before the daemon answers
            print(f"connect attempt {attempt + 1}: {error!r}", flush=True)
            await asyncio.sleep(1)
    else:
        check("API connection", False, "no connection after 30 attempts")
        return
    info = await client.device_info()
    flags = info.bluetooth_proxy_feature_flags
    check(
        "feature flags: active connections and remote caching",
        flags & BluetoothProxyFeature.ACTIVE_CONNECTIONS and flags & BluetoothProxyFeature.REMOTE_CACHING,
        f"flags {flags:#x}")

    frees = []
    client.subscribe_bluetooth_connections_free(lambda free, limit, allocated: frees.append((free, limit, list(allocated))))
    await until(lambda: frees, 10)
    check("free slots before", bool(frees) and frees[-1][0] == frees[-1][1] == 3, f"{frees[-1:] or 'none'}")

    address = int(PEER.replace(":", ""), 16)
    states = []
    await client.bluetooth_device_connect(
        address, lambda connected, mtu, error: states.append((connected, mtu, error)), timeout=60,
        feature_flags=flags, has_cache=False, address_type=0)
    if not check("connected through the proxy", bool(states) and states[-1][0], f"states {states}"):
        return
    await until(lambda: frees and frees[-1][0] == 2, 10)
    check("one slot taken while connected", frees[-1][0] == 2 and address in frees[-1][2], f"{frees[-1]}")

    services = await client.bluetooth_gatt_get_services(address)
    characteristics = {c.uuid: c for s in services.services for c in s.characteristics}
    print("services: " + ", ".join(f"{s.uuid}@{s.handle}" for s in services.services), flush=True)
    check("services listed", {BATTERY, FIRMWARE, CUSTOM} <= set(characteristics), f"{sorted(characteristics)}")

    battery = await client.bluetooth_gatt_read(address, characteristics[BATTERY].handle)
    check("battery read", bytes(battery) == b"\x57", f"{bytes(battery).hex()}")
    firmware = await client.bluetooth_gatt_read(address, characteristics[FIRMWARE].handle)
    check("firmware read", bytes(firmware) == b"1.2.3-e2e", f"{bytes(firmware)!r}")

    # Hold the connection for a while (check.sh counts the sightings the daemon publishes meanwhile).
    print("holding the connection for 6 s", flush=True)
    await asyncio.sleep(6)
    held = await client.bluetooth_gatt_read(address, characteristics[BATTERY].handle)
    check("still connected after 6 s", bytes(held) == b"\x57" and states[-1][0], f"{bytes(held).hex()}")

    custom = characteristics[CUSTOM]
    cccd = next((d for d in custom.descriptors if d.uuid == CCCD), None)
    if not check("the writable characteristic has a CCCD", cccd is not None, f"{custom.descriptors}"):
        return
    notes = []
    await client.bluetooth_gatt_start_notify(address, custom.handle, lambda handle, data: notes.append(bytes(data)))
    # As Home Assistant does for these connections: the client writes the CCCD itself.
    await client.bluetooth_gatt_write_descriptor(address, cccd.handle, b"\x01\x00")
    await client.bluetooth_gatt_write(address, custom.handle, b"\xca\xfe\x01", response=True)
    await until(lambda: notes, 15)
    check("notification of the written value", notes[:1] == [b"\xca\xfe\x01"], f"{[n.hex() for n in notes]}")
    again = await client.bluetooth_gatt_read(address, custom.handle)
    check("the written value reads back", bytes(again) == b"\xca\xfe\x01", f"{bytes(again).hex()}")

    await client.bluetooth_device_disconnect(address)
    check("disconnected", states[-1][0] is False, f"states {states}")
    await until(lambda: frees and frees[-1][0] == 3, 10)
    check("slots freed after the disconnect", frees[-1][0] == 3 and not frees[-1][2], f"{frees[-1]}")
    await client.disconnect()


try:
    asyncio.run(asyncio.wait_for(main(), 180))
except Exception as error:  # noqa: BLE001 - any failure is reported with what it was
    check("no exception", False, repr(error))
print(f"{len(FAILURES)} failure(s)" + (f": {FAILURES}" if FAILURES else ""), flush=True)
sys.exit(len(FAILURES))
