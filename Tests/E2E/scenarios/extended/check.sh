#!/usr/bin/env bash
# LE Extended Advertising Report events (subevent 0x0D) on the console, decoded to the iBeacon.
. "$(dirname "$0")/../../check-lib.sh"
console | grep -qE '^E2E-SCAN-extended: [0-9.]+ 3e..0d' || problem "no LE Extended Advertising Report on the console"
console | grep -q '^E2E-SCAN-json: .*"extended":true.*"id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"' \
    || problem "the iBeacon was not decoded from an extended report"
console | grep -q 'E2E: extended scenario passed' || problem "guest did not confirm the scenario"
finish "extended scenario"
