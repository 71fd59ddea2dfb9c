#!/usr/bin/env bash
# The Swift suites of an already built package (`swift build --build-tests`): the log goes to .build/test.log,
# then each suite's time (scripts/suite-times.sh); exits with `swift test`'s status.
# Usage: scripts/swift-tests.sh [SWIFT]
set -uo pipefail
cd "$(dirname "$0")/.."
"${1:-swift}" test --skip-build 2>&1 | tee .build/test.log
status=${PIPESTATUS[0]}
scripts/suite-times.sh .build/test.log
exit "$status"
