"""The site configuration's entities (issue 46, docs/site-config.md): each gateway's running version as a sensor,
a refusal as a `problem` binary sensor with the reason as an attribute. The kitchen and hall gateways run with
`site:`; the stage pushes a site configuration with the built `beaconbridge site push`, then a tampered one."""

import json
import subprocess

from stage_parts import wait_for

KEY = "5c0e9a1f3b7d2e4a6c8f0b1d3e5a7c9f1b3d5e7a9c1f3b5d7e9a1c3f5b7d9e1a"


def site_yaml(gateway_id, work):
    """The `site:` section of a gateway's own file (docs/site-config.md, step 3), with a short bound so the stage
    waits seconds for the commit."""
    return f"""\
site:
  id: house
  key_file: {work}/site.key
  apply_timeout_s: 5
  state_file: {work}/{gateway_id}-site.json
"""


def write_key(work):
    path = work / "site.key"
    path.write_text(KEY + "\n")
    path.chmod(0o600)


def site_checks(check, ha, refresh_registry, recorder, binary, work, kitchen, wait):
    """Both gateways announce the two entities; a push shows version 1 on the kitchen's sensor; a tampered push
    (version 2 with version 1's signature) turns its problem sensor on with reason `bad_signature`, version 1
    still showing."""
    def entity_of(unique_id):
        entities, _ = refresh_registry()
        return next((e for e in entities if e.get("unique_id") == unique_id), None)

    found = wait_for("site entities", lambda: all(entity_of(f"beaconbridge_{g}_site_{s}") for g in ("pi_kitchen", "pi_hall")
                                                   for s in ("version", "problem")), wait)
    version_entity = entity_of("beaconbridge_pi_kitchen_site_version") or {}
    problem_entity = entity_of("beaconbridge_pi_kitchen_site_problem") or {}
    check("site: each gateway's site configuration version sensor and problem binary_sensor exist (diagnostic)",
          found and version_entity.get("entity_category") == "diagnostic"
          and problem_entity.get("entity_category") == "diagnostic"
          and version_entity.get("entity_id", "").startswith("sensor.")
          and problem_entity.get("entity_id", "").startswith("binary_sensor."), [version_entity, problem_entity])
    version_id, problem_id = version_entity.get("entity_id"), problem_entity.get("entity_id")

    def state(entity_id):
        return (ha.state(entity_id) or {}) if entity_id else {}

    (work / "site.yaml").write_text("telemetry:\n  interval_s: 5\n")
    push = subprocess.run([binary, "site", "push", str(work / "site.yaml"), "--config", str(kitchen.config)],
                          capture_output=True, text=True, timeout=60)
    check("site: `beaconbridge site push` publishes version 1", push.returncode == 0
          and "version 1" in push.stdout, push.stdout + push.stderr)
    applied = wait_for("version 1 in Home Assistant",
                       lambda: state(version_id).get("state") == "1" and state(problem_id).get("state") == "off"
                       and state(version_id).get("attributes", {}).get("status") == "applied", wait)
    check("site: the kitchen's version sensor shows 1 (status applied, the sha256 as attributes), problem off",
          applied and len(state(version_id)["attributes"].get("sha256", "")) == 64,
          [state(version_id), state(problem_id)])

    # A tampered push: version 1's envelope with its version changed, so the signature no longer matches.
    envelope = recorder.last_json("beaconbridge/house/site/config") or {}
    envelope["version"] = 2
    recorder.client.publish("beaconbridge/house/site/config", json.dumps(envelope), qos=1, retain=True)
    refused = wait_for("the refusal in Home Assistant", lambda: state(problem_id).get("state") == "on", wait)
    attributes = state(problem_id).get("attributes", {})
    check("site: a tampered push turns the problem sensor on with reason bad_signature and the refused version; "
          "the version sensor still shows 1",
          refused and attributes.get("reason") == "bad_signature" and attributes.get("subject") == 2
          and attributes.get("status") == "refused" and "signature" in (attributes.get("message") or "")
          and state(version_id).get("state") == "1", [state(version_id), state(problem_id)])
