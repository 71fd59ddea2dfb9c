"""States over time: home / not_home, distance with units, regions, the end of a replay and SIGTERM (clean
DISCONNECT, unavailable), a Home Assistant restart, a broker that lost its retained messages, mqtt_room."""

import json
import re
import time

from ha_home import CONNECTED
from stage_parts import retained, wait_for


def is_number(text):
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def state_checks(check, ha, recorder, broker, kitchen, hall, entity, keys, badge, toolbox, t0, wait):
    def state(gateway, beacon, suffix):
        eid = entity(gateway, beacon, suffix)
        found = ha.state(eid) if eid else None
        return found["state"] if found else None

    def until(what, gateway, beacon, suffix, predicate, timeout=wait):
        return wait_for(what, lambda: predicate(state(gateway, beacon, suffix)), timeout)

    k = "pi-kitchen"
    # Live states while both gateways run.
    check("states: Keys tracker home", until("Keys home", k, keys, "tracker", lambda s: s == "home"))
    check("states: Keys presence on", until("Keys presence", k, keys, "presence", lambda s: s == "on"))
    check("states: Keys in the desk region (on)", until("Keys desk", k, keys, "region_desk", lambda s: s == "on"))
    check("states: Toolbox on the tool shelf (on)",
          until("Toolbox shelf", k, toolbox, "region_tool_shelf", lambda s: s == "on"))
    until("Keys distance", k, keys, "distance", is_number)
    distance = ha.state(entity(k, keys, "distance")) or {}
    attributes = distance.get("attributes", {})
    check("states: Keys distance is numeric, in m, device_class distance",
          is_number(distance.get("state")) and attributes.get("unit_of_measurement") == "m"
          and attributes.get("device_class") == "distance", distance)
    rssi = ha.state(entity(k, keys, "rssi")) or {}
    check("states: Keys RSSI is numeric, in dBm", is_number(rssi.get("state"))
          and rssi.get("attributes", {}).get("unit_of_measurement") == "dBm", rssi)

    # 5. Tracker attributes: stable identity only.
    tracker = ha.state(entity(k, keys, "tracker")) or {}
    names = set(tracker.get("attributes", {}))
    check("5. tracker attributes are the identity fields only (no seq, schema, kind, distance, time)",
          names == {"source_type", "friendly_name", "beacon_id", "format", "identifiers", "gateway"}
          and tracker["attributes"].get("beacon_id") == keys and tracker["attributes"].get("gateway") == k,
          sorted(names))

    # 1. mqtt_room with the documented configuration: the nearest room wins.
    room = wait_for("mqtt_room kitchen", lambda: (ha.state("sensor.keys_room") or {}).get("state") == "kitchen", wait)
    room_state = ha.state("sensor.keys_room") or {}
    check("1. mqtt_room (state_topic espresense/devices/<id>) reports the nearest room, kitchen",
          room and is_number(room_state.get("attributes", {}).get("distance")), room_state)
    hall_seen = [m for m in recorder.messages if m[1] == f"espresense/devices/iBeacon:{keys.split(':')[1]}-1-1/hall"]
    check("1. the hall gateway feeds the same mqtt_room topic tree", bool(hall_seen))

    # Badge leaves after 20 s: away, its distance and RSSI cleared, its region left.
    check("states: Badge tracker goes not_home",
          until("Badge not_home", k, badge, "tracker", lambda s: s == "not_home"))
    check("states: Badge presence off", until("Badge presence off", k, badge, "presence", lambda s: s == "off"))
    check("6. Badge distance is unknown (null) once away, not its last value",
          until("Badge distance unknown", k, badge, "distance", lambda s: s == "unknown"))
    check("6. Badge RSSI is unknown once away", until("Badge RSSI unknown", k, badge, "rssi", lambda s: s == "unknown"))
    check("states: Badge leaves the office region (off)",
          until("Badge office off", k, badge, "region_office", lambda s: s == "off"))

    # End of the hall replay: a clean stop, entities unavailable.
    code = hall.wait(wait * 2)
    check("9. the hall replay ends with exit status 0", code == 0, code)
    check("states: the hall gateway's entities turn unavailable when it stops",
          until("hall unavailable", "pi-hall", keys, "tracker", lambda s: s == "unavailable"))
    clean_disconnect(check, broker, recorder, "pi-hall", "end of replay")

    time.sleep(2)  # let the recorder commit (commit_interval 1 s)
    history = ha.history([entity(k, badge, "tracker"), entity(k, badge, "distance"), entity(k, badge, "region_office"),
                          entity("pi-hall", keys, "tracker")], t0)
    badge_states = history.get(entity(k, badge, "tracker"), [])
    check("history (recorder): Badge tracker home, then not_home", _in_order(badge_states, ["home", "not_home"]),
          badge_states)
    distances = history.get(entity(k, badge, "distance"), [])
    check("history: Badge distance numeric, then unknown",
          any(is_number(s) for s in distances) and distances[-1:] == ["unknown"], distances)
    office = history.get(entity(k, badge, "region_office"), [])
    check("history: Badge office region on, then off", _in_order(office, ["on", "off"]), office)
    hall_tracker = history.get(entity("pi-hall", keys, "tracker"), [])
    check("history: hall Keys tracker home, not_home at the end of the replay, then unavailable",
          _in_order(hall_tracker, ["home", "not_home", "unavailable"]), hall_tracker)

    expected = {(k, keys, "tracker"): "home", (k, keys, "region_desk"): "on", (k, badge, "tracker"): "not_home",
                (k, badge, "region_office"): "off", (k, toolbox, "region_tool_shelf"): "on"}

    def all_back():
        return all(state(*key) == value for key, value in expected.items())

    def current():
        return {f"{b.split(':')[-1]} {s}": state(g, b, s) for g, b, s in expected}

    # 7. A region message with state `unknown` (valid in the region schema; the gateway's own snapshots leave
    # unknown pairs out since issue 9, older gateways sent them) turns the binary_sensor unknown instead of
    # keeping `on` and logging "No matching payload found" (checked in the log checks).
    desk_topic = f"beaconbridge/pi-kitchen/region/desk/{keys}"
    unknown = json.dumps({"schema": "1", "id": "pi-kitchen-stage-1", "gateway": "pi-kitchen", "seq": 1,
                          "kind": "region", "time": time.time(), "event": "state", "region": "desk",
                          "beacon_id": keys, "state": "unknown", "since": None, "beacon": None})
    recorder.client.publish(desk_topic, unknown, qos=1, retain=False)
    check("7. a region `state: unknown` makes the binary_sensor unknown (not the old `on`)",
          until("desk unknown", k, keys, "region_desk", lambda s: s == "unknown"))
    check("states: the front porch region (1 h minimum dwell) is not on",
          state(k, keys, "region_front_porch") in ("unknown", "off"), state(k, keys, "region_front_porch"))

    # Home Assistant restart: its birth message brings discovery, presence and region snapshot.
    ha.stop()
    ha.start()
    ok = wait_for("HA running again", ha.running, 300) and wait_for(
        "MQTT loaded again", lambda: ha.mqtt_entry_state() == "loaded", wait)
    check("Home Assistant restarts", ok)
    check("states back after a Home Assistant restart", wait_for("states after HA restart", all_back, wait), current())

    # 2. and 10. A broker that lost its retained messages, then a Home Assistant restart.
    broker.stop()
    outage = time.monotonic()
    time.sleep(8)
    broker.start()
    back = time.monotonic()
    online = wait_for("gateway online again", lambda: [m for m in recorder.on("beaconbridge/pi-kitchen/availability", back)
                                                       if m[1] == "online"], wait, 0.1)
    if online:
        print(f"  (gateway back {online[0][0] - back:.1f} s after the broker; outage {back - outage:.1f} s)", flush=True)
    retries = [float(x) for line in kitchen.log_lines() for x in re.findall(r"retry_in_s=\"?([0-9.]+)", line)]
    check("10. every reconnect delay during the outage is within the 5 s default cap",
          online and retries and max(retries) <= 5.0, retries)
    topic = f"beaconbridge/pi-kitchen/presence/{badge}"
    wait_for("presence republished", lambda: recorder.on(topic, back), wait)
    payload = retained(broker.port, topic)
    check("2. the new broker holds Badge's presence (`away`) retained again after the reconnect",
          payload is not None and '"state":"away"' in payload, payload)
    wait_for("Home Assistant reconnected to the new broker",
             lambda: ha.log_path.read_text(errors="replace").count(CONNECTED) >= 2, wait)
    ha.stop()
    ha.start()
    ok = wait_for("HA running (3)", ha.running, 300) and wait_for(
        "MQTT loaded (3)", lambda: ha.mqtt_entry_state() == "loaded", wait)
    check("2. states back after a broker without retained messages and a Home Assistant restart",
          ok and wait_for("states after broker loss", all_back, wait), current())

    # SIGTERM: a clean DISCONNECT, one `offline`, every entity unavailable.
    stop = time.monotonic()
    code = kitchen.terminate()
    check("9. SIGTERM stops the kitchen gateway with exit status 0", code == 0, code)
    for suffix, beacon in (("tracker", keys), ("distance", keys), ("region_desk", keys), ("presence", toolbox)):
        check(f"states: {beacon.split(':')[-1]} {suffix} unavailable after SIGTERM",
              until(f"unavailable {suffix}", k, beacon, suffix, lambda s: s == "unavailable"))
    clean_disconnect(check, broker, recorder, "pi-kitchen", "SIGTERM", since=stop)


def clean_disconnect(check, broker, recorder, gateway_id, how, since=0.0):
    client = f"beaconbridge-{gateway_id}"
    time.sleep(1)
    lines = [line for line in broker.log().splitlines() if client in line]
    ends = [line for line in lines if re.search(r"closed its connection|disconnected due to|disconnected, not authorised"
                                                r"|has exceeded timeout|Socket error", line)]
    clean = [line for line in lines if line.rstrip().endswith(f"Client {client} disconnected.")]
    check(f"9. {how}: mosquitto logs a clean DISCONNECT for {client}, never a torn connection",
          clean and not ends, ends or lines[-3:])
    offline = [m for m in recorder.on(f"beaconbridge/{gateway_id}/availability", since) if m[1] == "offline"]
    check(f"9. {how}: exactly one `offline` (no last will after the explicit one)", len(offline) == 1, offline)


def _in_order(states, wanted):
    position = 0
    for value in states:
        if position < len(wanted) and value == wanted[position]:
            position += 1
    return position == len(wanted)
