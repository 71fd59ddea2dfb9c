"""Home Assistant's log: no warning or error the gateway caused (and none of the INFO/DEBUG lines the MQTT
entities write for payloads they cannot use, such as "No matching payload found")."""

import re

from ha_home import CONNECTED

# The thread's name may hold parentheses ("Thread-2 (_thread_main)", where Core 2024.3's MQTT client logs).
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ (?P<level>[A-Z]+) \((?P<thread>[^\[]*)\) \[(?P<logger>[^\]]+)\] "
                  r"(?P<message>.*)$")
# Loggers of what the gateway feeds: the MQTT integration and its platforms, mqtt_room, the entity platforms,
# templates (value / attribute templates run on the gateway's payloads).
GATEWAY_LOGGERS = ("homeassistant.components.mqtt", "homeassistant.components.mqtt_room",
                   "homeassistant.components.device_tracker", "homeassistant.components.sensor",
                   "homeassistant.components.binary_sensor", "homeassistant.helpers.template",
                   "homeassistant.helpers.entity", "homeassistant.helpers.entity_platform")
GATEWAY_WORDS = ("beaconbridge", "espresense", "keys", "badge", "toolbox")
# Lines that mean a payload was not understood, whatever their level.
REJECTIONS = ("No matching payload found", "Invalid state message", "Erroneous JSON", "JSON result was not a dictionary",
              "Skipping update because of malformatted data", "Template variable", "Unable to parse JSON",
              "Ignoring empty", "Empty template output", "is not a valid", "could not be", "Error parsing value")
# Known lines of this setup that have nothing to do with the gateway (printed, not counted).
UNRELATED = ("Skipping pip installation of required modules",
             "Support for the running Python version")
# Home Assistant's own connection to the broker lost when the stage stops mosquitto (checks_states, 2.): Core 2024.3
# logs "Disconnected from MQTT server 127.0.0.1:PORT (7)", Core 2026.2 "Error returned from MQTT server: The
# connection was lost." Allowed as often as the stage stops the broker, once per run of Home Assistant at most;
# any more count (a gateway taking over Home Assistant's client id would show so).
BROKER_LOST = ("Disconnected from MQTT server", "Error returned from MQTT server: The connection was lost")
BROKER_STOPS = 1


def without_paths(message):
    """The message without a traceback's `File "..."` lines: their paths name the stage's environment
    (~/.cache/beaconbridge/venv-ha-...), which says nothing about who caused the line."""
    return "\n".join(line for line in message.splitlines() if not line.lstrip().startswith('File "'))


def log_checks(check, log_paths, connected=CONNECTED):
    text = "\n".join(path.read_text(errors="replace") for path in log_paths)
    entries, current = [], None
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            current = match.groupdict()
            entries.append(current)
        elif current is not None:
            current["message"] += "\n" + line  # a traceback belongs to the line before
    caused, other, lost = [], [], []
    for entry in entries:
        serious = entry["level"] in ("WARNING", "ERROR", "CRITICAL")
        message = entry["message"]
        if entry["logger"].startswith(GATEWAY_LOGGERS) and any(word in message for word in REJECTIONS):
            caused.append(entry)
        elif serious and any(w in message for w in UNRELATED):
            continue
        elif serious and entry["logger"] == "homeassistant.components.mqtt.client" and \
                any(message.startswith(w) for w in BROKER_LOST) and len(lost) < BROKER_STOPS:
            lost.append(entry)
        elif serious and (entry["logger"].startswith(GATEWAY_LOGGERS)
                          or any(w in without_paths(message).lower() for w in GATEWAY_WORDS)):
            caused.append(entry)
        elif serious:
            other.append(entry)
    for entry in lost:
        print(f"  (HA log, the stage's broker stop: {entry['level']} {entry['message'].splitlines()[0][:200]})",
              flush=True)
    for entry in other:
        print(f"  (HA log, not from the gateway: {entry['level']} [{entry['logger']}] "
              f"{entry['message'].splitlines()[0][:200]})", flush=True)
    check(f"log: the logs of all {len(log_paths)} Home Assistant runs were read", len(log_paths) >= 3 and
          sum(1 for e in entries if connected in e["message"]) >= len(log_paths), log_paths)
    check("log: zero warnings or errors in Home Assistant's log caused by the gateway", not caused,
          "\n".join(f"{e['level']} [{e['logger']}] {e['message'][:300]}" for e in caused[:10]))
    print(f"  ({len(other)} other warning/error lines in Home Assistant's log, listed above; not counted)", flush=True)
