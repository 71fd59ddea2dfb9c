"""What Home Assistant made of the discovery configs: registries (devices, entity categories), names, units."""

import json

from stage_parts import wait_for


def entity_checks(check, ha, entities, devices, entity, keys, badge, toolbox, recorder):
    registry = {e["entity_id"]: e for e in entities}
    device_by_id = {d["id"]: d for d in devices}

    def reg(gateway, beacon, suffix):
        return registry.get(entity(gateway, beacon, suffix) or "")

    # 3. Region entities only for pairs whose match can select the beacon.
    regions = {"desk": {keys}, "office": {badge}, "tool_shelf": {toolbox}, "front_porch": {keys, badge}}
    announced = {(region, beacon) for region in regions for beacon in (keys, badge, toolbox)
                 if entity("pi-kitchen", beacon, "region_" + region)}
    wanted = {(region, beacon) for region, beacons in regions.items() for beacon in beacons}
    check("3. region binary_sensors exist exactly for the beacon x region pairs the match can select",
          announced == wanted, f"announced {sorted(announced)}, wanted {sorted(wanted)}")

    # 4. Two gateways: one device per beacon, gateway-named entities, no via_device to flip.
    keys_kitchen, keys_hall = reg("pi-kitchen", keys, "tracker"), reg("pi-hall", keys, "tracker")
    same_device = bool(keys_kitchen and keys_hall) and keys_kitchen["device_id"] == keys_hall["device_id"]
    check("4. both gateways' Keys trackers belong to one Keys device", same_device)
    device = device_by_id.get(keys_kitchen["device_id"]) if keys_kitchen else None
    check("4. the shared beacon device has no via_device", device is not None and device.get("via_device_id") is None,
          device)
    states = ha.states()
    names = {eid: s["attributes"].get("friendly_name") for eid, s in states.items() if eid in registry}
    expected_names = {
        ("pi-kitchen", keys, "tracker"): "Keys Kitchen gateway", ("pi-hall", keys, "tracker"): "Keys Hall gateway",
        ("pi-kitchen", keys, "distance"): "Keys Kitchen gateway distance",
        ("pi-hall", keys, "distance"): "Keys Hall gateway distance",
        ("pi-kitchen", badge, "rssi"): "Badge Kitchen gateway RSSI",
        ("pi-kitchen", toolbox, "presence"): "Toolbox Kitchen gateway presence",
        # 8. Region names are titles, not raw ids.
        ("pi-kitchen", keys, "region_desk"): "Keys Kitchen gateway Desk",
        ("pi-kitchen", keys, "region_front_porch"): "Keys Kitchen gateway Front porch",
        ("pi-kitchen", toolbox, "region_tool_shelf"): "Toolbox Kitchen gateway Tool shelf",
    }
    wrong = {k: names.get(entity(*k)) for k, v in expected_names.items() if names.get(entity(*k)) != v}
    check("4./8. entity names say which gateway reports them; region names are titles", not wrong, wrong)
    beacon_names = [n for eid, n in names.items() if registry[eid].get("device_id") != _gateway_device(registry, eid)]
    check("4. no two beacon entities share a name", len(beacon_names) == len(set(beacon_names)),
          sorted(n for n in beacon_names if beacon_names.count(n) > 1))

    # 8. Diagnostic RSSI and backlog, units and icon, manufacturer and model.
    rssi, distance = reg("pi-kitchen", keys, "rssi"), reg("pi-kitchen", keys, "distance")
    check("8. RSSI is a diagnostic entity, distance is not",
          rssi is not None and rssi.get("entity_category") == "diagnostic"
          and distance is not None and distance.get("entity_category") is None,
          (rssi or {}).get("entity_category"))
    backlog_id = next((eid for eid, e in registry.items() if e.get("unique_id") == "beaconbridge_pi_kitchen_outbox_rows"),
                      None)
    backlog = wait_for("backlog sensor value", lambda: (ha.state(backlog_id) or {}) if backlog_id else None, 30)
    attributes = (backlog or {}).get("attributes", {})
    check("8. the outbox backlog sensor is diagnostic with unit `events` and an icon",
          registry.get(backlog_id, {}).get("entity_category") == "diagnostic"
          and attributes.get("unit_of_measurement") == "events" and attributes.get("icon") == "mdi:tray-full",
          attributes)
    # Gateway health (issue 29): reports per second, beacons heard, time of the last report, from telemetry.
    health = {name: next((eid for eid, e in registry.items()
                          if e.get("unique_id") == f"beaconbridge_pi_kitchen_{name}"), None)
              for name in ("reports_per_second", "tracked_beacons", "last_report")}
    values = wait_for("gateway health values",
                      lambda: {n: (ha.state(eid) or {}).get("state") for n, eid in health.items()}
                      if all(health.values()) and all((ha.state(eid) or {}).get("state") not in (None, "unknown",
                                                                                                "unavailable")
                                                      for eid in health.values()) else None, 60)
    last = (values or {}).get("last_report") or ""
    check("8. the gateway's health sensors are diagnostic; beacons heard > 0, reports/s a number, the last report a "
          "timestamp",
          all(registry.get(eid, {}).get("entity_category") == "diagnostic" for eid in health.values() if eid)
          and values is not None and float(values["tracked_beacons"]) > 0
          and float(values["reports_per_second"]) >= 0 and last[:2] in ("19", "20") and "T" in last,
          {"ids": health, "values": values})
    models = {b: (device_by_id.get((reg("pi-kitchen", b, "tracker") or {}).get("device_id")) or {}) for b in
              (keys, toolbox)}
    check("8. beacon devices have a manufacturer and the format as model",
          all(d.get("manufacturer") == "BeaconBridge" for d in models.values())
          and models[keys].get("model") == "iBeacon" and models[toolbox].get("model") == "Eddystone-UID",
          {b: (d.get("manufacturer"), d.get("model")) for b, d in models.items()})
    gateway_device = device_by_id.get(registry.get(backlog_id, {}).get("device_id"))
    check("8. the gateway device is named after gateway.name, with manufacturer and software version",
          gateway_device is not None and gateway_device.get("name") == "Kitchen gateway"
          and gateway_device.get("manufacturer") == "BeaconBridge" and gateway_device.get("sw_version"),
          gateway_device)

    # 6. expire_after in the distance / RSSI configs (away timeout 15 s + sighting interval 5 s).
    topic = f"homeassistant/sensor/beaconbridge_pi_kitchen/{_slug(keys)}_distance/config"
    config = recorder.last_json(topic) or {}
    check("6. distance and RSSI sensors are announced with expire_after = away timeout + sighting interval",
          config.get("expire_after") == 20, config.get("expire_after"))


def _gateway_device(registry, entity_id):
    entry = registry[entity_id]
    return entry["device_id"] if entry.get("unique_id", "").endswith("_outbox_rows") else None


def _slug(text):
    import re
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def dump(value):
    return json.dumps(value, sort_keys=True)[:400]
