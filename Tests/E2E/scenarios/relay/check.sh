#!/usr/bin/env bash
# "before" and "after" arrived, "during" (broker down) did not.
. "$(dirname "$0")/../../check-lib.sh"
[ -n "$(first_message e2e/relay 0 ' before$')" ] || problem "the guest's first publish did not arrive"
[ -n "$(first_message e2e/relay 0 ' after$')" ] || problem "the guest's publish after the broker restart did not arrive"
[ -z "$(first_message e2e/relay 0 ' during$')" ] || problem "a publish arrived while the broker was stopped"
finish "relay scenario"
