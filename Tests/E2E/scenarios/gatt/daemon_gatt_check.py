#!/usr/bin/env python3
"""Host-side check of the `gatt` scenario's daemon steps (issue 31, branch dfud): the daemon's replies to the MQTT
`read`, `write` and `dfu` commands, the update's progress and the Home Assistant update entity's states, as the
host's broker recorded them (mqtt.log: `<unix time> <topic> <payload>`). Also writes every message under the
gateway's prefix and the discovery prefix from the daemon's restart to the end of its update to RECORD (JSON
lines: time offset, topic, payload, retain), the source of Tests/HomeAssistant/fixtures/dfu-update.jsonl.

Usage: daemon_gatt_check.py MQTT_LOG CONSOLE_LOG RECORD. Exit 0 when every check passed."""
import json
import re
import sys

BASE = "beaconbridge/e2e"
DEVICE = "peer"
IBEACON = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"
RETAINED = re.compile(r"^(homeassistant/.*/config|beaconbridge/e2e/(availability|device/[^/]+/(info|update)))$")


def main(mqtt_log, console_log, record_path):
    problems = []
    console = open(console_log, errors="replace").read().replace("\r", "")
    marks = {m.group(1): int(m.group(2)) for m in re.finditer(r"^E2E-MARK: (\S+) (\d+)$", console, re.M)}
    crc = re.search(r"^E2E-DFUD: crc=([0-9a-f]{8})$", console, re.M)
    if "daemon-gatt-start" not in marks or "daemon-dfu-end" not in marks or not crc:
        print("check: the guest did not reach the end of the daemon's update")
        return 1
    start, dfu_start, dfu_end = marks["daemon-gatt-start"], marks["daemon-dfu-start"], marks["daemon-dfu-end"]
    messages = []
    for line in open(mqtt_log, errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 2:
            continue
        try:
            when = float(parts[0])
        except ValueError:
            continue
        messages.append((when, parts[1], parts[2] if len(parts) > 2 else ""))
    window = [m for m in messages if start - 1 <= m[0] <= dfu_end + 3]

    def payloads(topic):
        out = []
        for _, t, p in window:
            if t == topic:
                try:
                    out.append(json.loads(p))
                except ValueError:
                    problems.append(f"{topic}: not JSON: {p[:80]}")
        return out

    def reply(op, rid):
        found = [p for p in payloads(f"{BASE}/reply/gatt/{op}") if p.get("id") == rid]
        if not found:
            problems.append(f"no reply {op} {rid}")
            return {}
        return found[-1]

    read = reply("read", "e2e-read")
    if read and not (read.get("ok") and read.get("value") == "57"):
        problems.append(f"read of 2a19 did not answer 57: {read}")
    write = reply("write", "e2e-write")
    if write and not (write.get("ok") and write.get("written") == 3):
        problems.append(f"write did not succeed: {write}")
    again = reply("dfu", "e2e-dfu-again")
    if again and (again.get("ok") or again.get("error", {}).get("kind") != "busy"):
        problems.append(f"a second update of the device was not refused busy: {again}")
    final = reply("dfu", "install-peer")
    if final and not (final.get("ok") and final.get("bytes") == 163840 and final.get("crc") == crc.group(1)):
        problems.append(f"the update's reply is not a success of 163840 bytes crc {crc.group(1)}: {final}")
    progress = [p for p in payloads(f"{BASE}/reply/gatt/dfu/progress") if p.get("id") == "install-peer"]
    percents = [p["percent"] for p in progress if p.get("event") == "progress"]
    print(f"check: daemon dfu progress percents {percents}, reply {final}")
    if len(percents) < 3 or any(b <= a for a, b in zip(percents, percents[1:])):
        problems.append(f"progress did not rise in at least 3 messages: {percents}")
    states = payloads(f"{BASE}/device/{DEVICE}/update")
    running = [s.get("update_percentage") for s in states if s.get("in_progress")]
    print(f"check: update entity states: {len(states)}, in progress at {running}, last {states[-1] if states else None}")
    if not running or any(b < a for a, b in zip(running, running[1:])):
        problems.append(f"the update entity did not show a rising update_percentage: {running}")
    if not states or states[-1].get("in_progress") or states[-1].get("installed_version") != "2" \
            or states[-1].get("latest_version") != "2":
        problems.append(f"the update entity did not end installed == latest == 2: {states[-1:]} ")
    infos = payloads(f"{BASE}/device/{DEVICE}/info")
    if not any(i.get("battery") == 87 and i.get("firmware") == "1.2.3-e2e" for i in infos):
        problems.append(f"no device information with battery 87 and firmware 1.2.3-e2e: {infos}")
    configs = {t: json.loads(p) for _, t, p in window if t.startswith("homeassistant/") and t.endswith("/config")
               and f"/{DEVICE}_" in t and p}
    update = [c for t, c in configs.items() if t.startswith("homeassistant/update/")]
    sensors = [c for t, c in configs.items() if t.startswith("homeassistant/sensor/")]
    if not update or not sensors:
        problems.append(f"discovery lacks the update entity or the sensors of {DEVICE}: {sorted(configs)}")
    else:
        ids = {json.dumps(c["device"]["identifiers"]) for c in update + sensors}
        if len(ids) != 1:
            problems.append(f"the update entity and the sensors are on different devices: {ids}")
        if update[0].get("command_topic") != f"{BASE}/command/update/{DEVICE}":
            problems.append(f"update entity command_topic: {update[0].get('command_topic')}")
    sightings = [m for m in messages if m[1] == f"{BASE}/sighting/{IBEACON}" and dfu_start + 2 <= m[0] <= dfu_end]
    print(f"check: {len(sightings)} sightings from 2 s into the daemon's update to its end ({dfu_start}..{dfu_end})")
    if len(sightings) < 2:
        problems.append(f"sightings stopped during the daemon's update ({len(sightings)})")
    with open(record_path, "w") as out:
        for when, topic, payload in window:
            if topic.startswith(BASE + "/") or topic.startswith("homeassistant/"):
                out.write(json.dumps({"t": round(when - start, 3), "topic": topic, "payload": payload,
                                      "retain": bool(RETAINED.match(topic))}) + "\n")
    print(f"check: recorded {sum(1 for _ in open(record_path))} messages to {record_path}")
    for problem in problems:
        print(f"check: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
