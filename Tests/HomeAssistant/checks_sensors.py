"""Sensor readings in Home Assistant: the garden gateway replays a capture of a Ruuvi tag, a Govee H5075 and a
BTHome v2 sensor (sensor_capture.py); Home Assistant must create one entity per reading each device sends, with
the right device_class, unit_of_measurement and state_class and the decoded value, and none for readings a
device does not send."""

import json

from sensor_capture import ABSENT, BUTTON_ADDRESS, BUTTON_EVENTS, SENSORS
from stage_parts import wait_for


def sensor_checks(check, ha, refresh_registry, entity, wait, recorder):
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
    check("sensors: the readings of the four devices belong to four devices", len(devices - {None}) == 4, devices)

    # The button: each press reaches the sighting topic exactly once (a sighting at once, not carried into later
    # sightings, a repeated advertisement is no second press); its device triggers exist once it was pressed.
    button = f"bthome:{BUTTON_ADDRESS}"
    topic = f"beaconbridge/pi-garden/sighting/{button}"

    def pressed():
        events = [json.loads(payload).get("fields", {}).get("button") for _, payload, _ in recorder.on(topic)]
        return [e for e in events if e is not None]

    wanted_presses = [event for _, (_, event) in sorted(BUTTON_EVENTS.items())]
    wait_for("both button events", lambda: len(pressed()) >= len(wanted_presses), wait)
    sightings = recorder.on(topic)
    check("sensors: each button event reaches the sighting topic exactly once (press, double_press), "
          f"in {len(sightings)} sightings", pressed() == wanted_presses, pressed())
    device_id = by_unique.get(f"beaconbridge_pi_garden_{_slug(button)}_battery_pct", {}).get("device_id")
    wanted_types = {(event, "button") for event in ("press", "double_press", "triple_press", "long_press",
                                                     "long_double_press", "long_triple_press", "hold_press",
                                                     "hold_release")}

    def trigger_types():
        triggers = ha.ws({"type": "device_automation/trigger/list", "device_id": device_id})[0] if device_id else []
        return {(t.get("type"), t.get("subtype")) for t in triggers if t.get("domain") == "mqtt"}

    wait_for("the button's device triggers", lambda: trigger_types() == wanted_types, wait)
    types = trigger_types()
    check("sensors: the BTHome button's device has a device trigger per button event type (and no others)",
          types == wanted_types, f"device {device_id}: {sorted(types)}")


def _slug(text):
    import re
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
