"""Sensor readings in Home Assistant: the garden gateway replays a capture of a Ruuvi tag, a Govee H5075 and a
BTHome v2 sensor (sensor_capture.py); Home Assistant must create one entity per reading each device sends, with
the right device_class, unit_of_measurement and state_class and the decoded value, and none for readings a
device does not send."""

from sensor_capture import ABSENT, SENSORS
from stage_parts import wait_for


def sensor_checks(check, ha, refresh_registry, entity, wait):
    gateway = "pi-garden"
    wanted = [(beacon, field) for beacon, field, *_ in SENSORS]
    wait_for("sensor entities", lambda: refresh_registry() and all(entity(gateway, b, f) for b, f in wanted), wait)
    entities, _ = refresh_registry()
    missing = [f"{b} {f}" for b, f in wanted if not entity(gateway, b, f)]
    check(f"sensors: Home Assistant created all {len(wanted)} reading entities of the Ruuvi, Govee and BTHome "
          "devices", not missing, missing)
    present = [f"{b} {f}" for b, f in ABSENT if entity(gateway, b, f)]
    check("sensors: no entity for a reading a device does not send (or for information fields)", not present, present)

    def settled():
        states = {}
        for beacon, field, *_ in SENSORS:
            eid = entity(gateway, beacon, field)
            found = ha.state(eid) if eid else None
            if not found or found["state"] in ("unknown", "unavailable"):
                return None
            states[(beacon, field)] = found
        return states

    states = wait_for("sensor states", settled, wait) or {}
    wrong = {}
    for beacon, field, component, device_class, unit, state_class, value in SENSORS:
        found = states.get((beacon, field))
        eid = entity(gateway, beacon, field) or ""
        attributes = (found or {}).get("attributes", {})
        problems = []
        if not eid.startswith(component + "."):
            problems.append(f"entity {eid} is not a {component}")
        if attributes.get("device_class") != device_class:
            problems.append(f"device_class {attributes.get('device_class')}")
        if attributes.get("unit_of_measurement") != unit:
            problems.append(f"unit {attributes.get('unit_of_measurement')}")
        if attributes.get("state_class") != state_class:
            problems.append(f"state_class {attributes.get('state_class')}")
        state = (found or {}).get("state")
        if isinstance(value, str):
            if state != value:
                problems.append(f"state {state}, wanted {value}")
        else:
            try:
                if abs(float(state) - value) > 1e-6:
                    problems.append(f"state {state}, wanted {value}")
            except (TypeError, ValueError):
                problems.append(f"state {state}, wanted {value}")
        if problems:
            wrong[f"{beacon} {field}"] = problems
    check("sensors: every reading has the right device_class, unit_of_measurement, state_class and value",
          not wrong and len(states) == len(SENSORS), wrong or f"{len(states)} of {len(SENSORS)} settled")
    by_unique = {e.get("unique_id"): e for e in entities}
    devices = {by_unique.get(f"beaconbridge_pi_garden_{_slug(b)}_{f}", {}).get("device_id") for b, f in wanted}
    check("sensors: the readings of the three devices belong to three devices", len(devices - {None}) == 3, devices)


def _slug(text):
    import re
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
