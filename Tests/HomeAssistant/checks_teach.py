"""The teach buttons and progress (issue 43, docs/teach.md "From Home Assistant"): the desk region names a typical
device (`taught_like`), so each gateway announces "Teach Desk boundary" / "Teach Desk inside" buttons and a "Teach"
sensor of its replies. Pressing the kitchen's boundary button through Home Assistant's own service must start a
teach on the gateways (the kitchen's Teach sensor leaves unknown for started / recording / done, region desk)."""

from stage_parts import wait_for


def teach_checks(check, ha, refresh_registry, wait):
    def entity_of(unique_id):
        entities, _ = refresh_registry()
        return next((e for e in entities if e.get("unique_id") == unique_id), None)

    wanted = [f"beaconbridge_{g}_teach_desk_{spot}" for g in ("pi_kitchen", "pi_hall") for spot in ("boundary", "inside")]
    wanted += [f"beaconbridge_{g}_teach" for g in ("pi_kitchen", "pi_hall")]
    found = wait_for("teach entities", lambda: all(entity_of(u) for u in wanted), wait)
    button = entity_of("beaconbridge_pi_kitchen_teach_desk_boundary") or {}
    sensor = entity_of("beaconbridge_pi_kitchen_teach") or {}
    check("teach: each gateway has the desk region's two teach buttons and a Teach sensor",
          found and button.get("entity_id", "").startswith("button.")
          and sensor.get("entity_id", "").startswith("sensor."), [u for u in wanted if not entity_of(u)])
    button_id, sensor_id = button.get("entity_id"), sensor.get("entity_id")
    if not button_id or not sensor_id:
        return

    def state():
        return ha.state(sensor_id) or {}

    ha.rest("/api/services/button/press", method="POST", body={"entity_id": button_id})
    started = wait_for("the teach's progress in Home Assistant",
                       lambda: state().get("state") in ("started", "recording", "done"), wait)
    attributes = state().get("attributes", {})
    check("teach: pressing 'Teach Desk boundary' in Home Assistant starts a teach of the typical device; the Teach "
          "sensor shows its progress (state and the reply's region, device, seconds_left)",
          started and attributes.get("region") == "desk" and attributes.get("at") == "boundary"
          and "seconds_left" in attributes, state())
