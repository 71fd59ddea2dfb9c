"""The firmware update entity of a device the gateway connects to (issue 31): the stage has no Bluetooth, so it
feeds Home Assistant the messages the daemon published in the QEMU scenario `gatt` (fixtures/dfu-update.jsonl:
its discovery, device information, update entity states during a Secure DFU update through the kernel, and the
update's progress), in order, to the stage's broker. Checked through Home Assistant's API: the update entity
exists with the installed and latest versions, shows in_progress with a rising update_percentage (Core releases
whose MQTT update reads them: 2024.11 and later; Core 2024.3 ignores both, said in the check), ends with
installed == latest, and the battery (87) and firmware ("1.2.3-e2e") sensors have their values and share the
update entity's device. DFUUpdateFixtureTests (swift test) fails when the daemon's discovery leaves the fixture."""

import datetime
import json
import pathlib
import time
import urllib.parse

from stage_parts import wait_for

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "dfu-update.jsonl"
UPDATE_ID = "beaconbridge_e2e_peer_firmware_update"
BATTERY_ID = "beaconbridge_e2e_peer_battery"
FIRMWARE_ID = "beaconbridge_e2e_peer_firmware"


def dfu_update_checks(check, ha, refresh_registry, recorder, wait):
    messages = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    version = (ha.rest("/api/config") or {}).get("version", "")
    print(f"dfu: Home Assistant {version}, {len(messages)} recorded messages", flush=True)
    reads_progress = tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) >= (2024, 11)
    since = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    # Home Assistant does not record in_progress and update_percentage (the update entity's unrecorded
    # attributes): the progress is read live, each recorded state awaited (bounded) before the next message.
    found = {}
    observed = []

    def update_entity_id():
        if "id" not in found:
            entities, _ = refresh_registry()
            for e in entities:
                if e.get("platform") == "mqtt" and e.get("unique_id") == UPDATE_ID:
                    found["id"] = e["entity_id"]
        return found.get("id")

    last = None
    for message in messages:
        # The recorded pacing, compressed: at most 0.25 s between two messages (Home Assistant handles each).
        if last is not None:
            time.sleep(min(max(message["t"] - last, 0.0), 0.25))
        last = message["t"]
        recorder.client.publish(message["topic"], message["payload"], qos=1, retain=message["retain"])
        if reads_progress and message["topic"] == "beaconbridge/e2e/device/peer/update":
            state = json.loads(message["payload"])
            if state.get("in_progress"):
                wanted = state.get("update_percentage")

                def shown(wanted=wanted):
                    eid = update_entity_id()
                    attributes = ((ha.state(eid) if eid else None) or {}).get("attributes", {})
                    if attributes.get("in_progress") is True and attributes.get("update_percentage") == wanted:
                        return (wanted,)  # a tuple: 0 % is a value too
                    return None

                if wait_for(f"update_percentage {wanted}", shown, 10, interval=0.1):
                    observed.append(wanted)

    def entities():
        registered, _ = refresh_registry()
        by_unique = {e.get("unique_id"): e for e in registered if e.get("platform") == "mqtt"}
        if all(u in by_unique for u in (UPDATE_ID, BATTERY_ID, FIRMWARE_ID)):
            return by_unique
        return None

    by_unique = wait_for("the update entity and the device sensors", entities, wait) or {}
    check("dfu: Home Assistant created the update entity and the battery and firmware sensors from the daemon's "
          "discovery", all(u in by_unique for u in (UPDATE_ID, BATTERY_ID, FIRMWARE_ID)), sorted(by_unique)[:10])
    if not by_unique:
        return
    update_entity = by_unique[UPDATE_ID]["entity_id"]
    devices = {by_unique[u].get("device_id") for u in (UPDATE_ID, BATTERY_ID, FIRMWARE_ID)}
    check("dfu: the update entity and the battery and firmware sensors share one device", len(devices) == 1
          and None not in devices, devices)

    def final():
        state = ha.state(update_entity)
        attributes = (state or {}).get("attributes", {})
        if attributes.get("installed_version") and attributes.get("installed_version") == attributes.get(
                "latest_version") and not attributes.get("in_progress"):
            return state
        return None

    end = wait_for("the update entity's final state", final, wait)
    attributes = (end or {}).get("attributes", {})
    check("dfu: the update ends with installed_version == latest_version (2) and the entity off",
          bool(end) and attributes.get("installed_version") == "2" and end.get("state") == "off",
          end or ha.state(update_entity))
    battery = ha.state(by_unique[BATTERY_ID]["entity_id"]) or {}
    firmware = ha.state(by_unique[FIRMWARE_ID]["entity_id"]) or {}
    check("dfu: the battery sensor reads 87 % and the firmware sensor 1.2.3-e2e",
          battery.get("state") == "87" and battery.get("attributes", {}).get("unit_of_measurement") == "%"
          and firmware.get("state") == "1.2.3-e2e", (battery.get("state"), firmware.get("state")))

    rows = wait_for("the update entity's history", lambda: _history(ha, update_entity, since), wait) or []
    seen = [(r.get("state"), r.get("attributes", {}).get("installed_version"),
             r.get("attributes", {}).get("latest_version"), r.get("attributes", {}).get("in_progress"),
             r.get("attributes", {}).get("update_percentage")) for r in rows]
    print(f"dfu: update entity history (state, installed, latest, in_progress, percent): {seen}", flush=True)
    before = [s for s in seen if s[1] and s[2] and s[1] != s[2]]
    check("dfu: before the update the entity showed installed 1.2.3-e2e, latest 2 (an update available: on)",
          any(s[0] == "on" and s[1] == "1.2.3-e2e" and s[2] == "2" for s in before), seen[:4])
    if reads_progress:
        check("dfu: the entity showed in_progress with a rising update_percentage (each recorded state, at least 3)",
              len(observed) >= 3 and observed == sorted(observed) and len(set(observed)) >= 3, observed)
    else:
        check(f"dfu: Home Assistant {version}'s MQTT update ignores in_progress and update_percentage (2024.11 "
              "added them): checked by the newer Core's stage (scripts/ha-stage-trixie.sh)",
              not any(s[3] is True for s in seen), seen)


def _history(ha, entity_id, since):
    # With attributes (HomeAssistant.history asks without): the versions and the progress are attributes.
    start = urllib.parse.quote(since.strftime("%Y-%m-%dT%H:%M:%S+00:00"))
    rows = ha.rest(f"/api/history/period/{start}?filter_entity_id={entity_id}")
    flat = [row for group in (rows or []) for row in group]
    return flat if any(r.get("attributes", {}).get("installed_version") == "2" for r in flat) else None
