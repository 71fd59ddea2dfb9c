#!/usr/bin/env bash
# Cross-checks the sensor decoders against the reference decoders Home Assistant uses (bthome-ble, ruuvitag-ble,
# govee-ble; Tests/Reference/requirements.txt pins them and their dependencies). They live in a virtual environment
# cached under ~/.cache/beaconbridge, keyed by the hash of the requirements file; without PyPI this prints SKIP and
# succeeds. Their decodings of the published and generated frames go to .build/reference/vectors.json, and the
# Swift test ReferenceCrossCheckTests compares ours with them (needs `swift build --build-tests` first).
# About 10 s once the environment is cached (about 30 s to create it).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
requirements=Tests/Reference/requirements.txt
key=$(sha256sum "$requirements" | cut -c1-16)
venv="${BEACONBRIDGE_CACHE:-$HOME/.cache/beaconbridge}/venv-reference-$key"
started=$(date +%s)

if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "SKIP: reference cross-check: python3 -m venv is not available (apt package python3-venv)"
    rm -rf "$venv"
    exit 0
  fi
  if ! PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 600 "$venv/bin/pip" install --quiet --retries 1 --timeout 20 \
      -r "$requirements" >"$venv.log" 2>&1; then
    echo "SKIP: reference cross-check: cannot install the pinned reference decoders from PyPI ($(tail -1 "$venv.log"))"
    rm -rf "$venv"
    exit 0
  fi
  rm -f "$venv.log"
  touch "$venv/.complete"
fi

mkdir -p .build/reference
"$venv/bin/python" Tests/Reference/reference_vectors.py Tests/Reference/published-frames.json .build/reference/vectors.json
set +e
BEACONBRIDGE_REFERENCE_VECTORS="$PWD/.build/reference/vectors.json" \
  "$SWIFT" test --skip-build --filter ReferenceCrossCheckTests >.build/reference/test.log 2>&1
status=$?
set -e
grep -E "reference cross-check|✘|↳|passed after|failed after|error:" .build/reference/test.log \
  | grep -v "Testing Library\|Target Platform" || true
echo "reference cross-check stage: $(( $(date +%s) - started )) s"
exit "$status"
