# shellcheck shell=bash
# The demo story's gateway configuration (docs/demo.md): its three regions and named beacons, Home Assistant
# discovery on, a broker on 127.0.0.1. Used by `make demo` (scripts/demo.sh) and the container stage
# (scripts/container-stage.sh), so both replay the story with the same configuration. Sourced, not run.

# demo_config PORT OUTBOX: prints the configuration for the broker on 127.0.0.1:PORT with the outbox database at
# OUTBOX (a path as the gateway sees it: in the container stage, inside the container).
demo_config() {
    local port=$1 outbox=$2
    cat <<YAML
gateway:
  id: demo
  name: Demo gateway
  room: living-room
logging:
  level: notice
telemetry:
  interval_s: 10
tracking:
  away_timeout_s: 60
  publish:
    sighting_interval_s: 30
    sighting_min_distance_m: 5
regions:
  - name: desk
    match: {format: ibeacon, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 1, minor: 1}
    enter: {rssi_above: -70}
    exit_period_s: 15
  - name: office
    match: {format: ibeacon, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 2}
    enter: {rssi_above: -78}
    exit_period_s: 30
  - name: shelf
    match: {format: eddystone-uid, namespace: edd1ebeac04e5defa017}
    enter: {rssi_above: -72}
    exit_period_s: 15
beacons:
  - id: ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1
    name: Keys
  - id: ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:7
    name: Badge
  - id: eddystone-uid:edd1ebeac04e5defa017:0123456789ab
    name: Toolbox
mqtt:
  host: 127.0.0.1
  port: $port
topics:
  home_assistant:
    enabled: true
outbox:
  path: $outbox
YAML
}
