#!/usr/bin/env python3
"""Makes Tests/HomeAssistant/fixtures/dfu-update.jsonl from a recording of the QEMU scenario `gatt`
(daemon-gatt.jsonl in the e2e run directory, written by Tests/E2E/scenarios/gatt/daemon_gatt_check.py): the
messages Home Assistant consumes (discovery configs, the gateway's availability, the device's information and
update entity states) and the update's progress and replies, in the order the broker delivered them.

usage: python3 Tests/HomeAssistant/dfu_fixture.py RECORDING [OUT]
       (after: flock -o /tmp/bb-build.lock env E2E_BIN=$PWD/.build/debug/beaconbridge scripts/e2e.sh gatt;
        RECORDING is .build/e2e-cache/run.*/gatt/daemon-gatt.jsonl of that run)"""
import json
import re
import sys

KEEP = re.compile(r"^(homeassistant/.*/config|beaconbridge/e2e/(availability|device/peer/(info|update)"
                  r"|reply/gatt/dfu(/progress)?))$")


def main(recording, out="Tests/HomeAssistant/fixtures/dfu-update.jsonl"):
    kept = []
    for line in open(recording):
        message = json.loads(line)
        if KEEP.match(message["topic"]):
            kept.append(message)
    if not any(m["topic"].startswith("homeassistant/update/") for m in kept):
        raise SystemExit(f"{recording}: no update entity discovery in the recording")
    with open(out, "w") as handle:
        for message in kept:
            handle.write(json.dumps(message, separators=(",", ":")) + "\n")
    print(f"{out}: {len(kept)} messages")


if __name__ == "__main__":
    main(*sys.argv[1:3])
