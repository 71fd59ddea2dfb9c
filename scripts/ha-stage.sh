#!/usr/bin/env bash
# The Home Assistant stage of `make test` (docs/home-assistant.md, "Verified against Home Assistant"): a pinned
# Home Assistant Core 2024.3.3 in a cached virtual environment, a private mosquitto on a free loopback port, the
# built gateway replaying simulated captures, checks through Home Assistant's REST/websocket API, recorder and log.
#
#   scripts/ha-stage.sh [BEACONBRIDGE_BINARY]      (default .build/debug/beaconbridge)
#   scripts/ha-stage.sh --install-only              (only create the cached virtual environment)
#
# The virtual environment lives in ~/.cache/beaconbridge/venv-ha-<hash of Tests/HomeAssistant/requirements.txt>
# (HA_STAGE_VENV_ROOT overrides ~/.cache/beaconbridge). Python: Debian's /usr/bin/python3 (3.11, with
# python3-venv, installed by `make deps`). Where the package index cannot be reached and no cached environment
# exists, the stage prints a SKIP line and succeeds. HA_STAGE_KEEP=1 keeps the work directory.
set -euo pipefail
# shellcheck source=stage-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/stage-lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INSTALL_ONLY=0
[[ "${1:-}" == "--install-only" ]] && { INSTALL_ONLY=1; shift; }
BIN="${1:-$ROOT/.build/debug/beaconbridge}"
STAGE="$ROOT/Tests/HomeAssistant"
REQUIREMENTS="$STAGE/requirements.txt"
PYTHON="${HA_STAGE_PYTHON:-/usr/bin/python3}"
START=$SECONDS

[[ $INSTALL_ONLY == 1 || -x "$BIN" ]] || { echo "ha-stage: $BIN is not built (run swift build first)" >&2; exit 69; }
[[ -x /usr/sbin/mosquitto ]] || { echo "ha-stage: /usr/sbin/mosquitto missing (make deps installs it)" >&2; exit 69; }
if ! "$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
    # Home Assistant 2024.3 needs Python 3.11 or 3.12; Debian 12's is 3.11 (python3-venv from `make deps`).
    echo "ha-stage: $PYTHON must be Python 3.11 with venv and ensurepip (Debian 12: apt-get install python3-venv)" >&2
    exit 69
fi

HASH="$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
VENV_ROOT="${HA_STAGE_VENV_ROOT:-$HOME/.cache/beaconbridge}"
VENV="$VENV_ROOT/venv-ha-$HASH"
if [[ ! -x "$VENV/bin/python" || ! -f "$VENV/.complete" ]]; then
    mkdir -p "$VENV_ROOT"
    exec 9>"$VENV_ROOT/venv-ha.lock"
    flock 9
    if [[ ! -f "$VENV/.complete" ]]; then
        rm -rf "$VENV"
        "$PYTHON" -m venv "$VENV"
        # Reachability through pip itself (whatever index pip is configured for), bounded.
        if ! timeout 60 "$VENV/bin/python" -m pip download --no-deps --no-cache-dir -q -d "$VENV/probe" "josepy==1.15.0" \
                >/dev/null 2>&1; then
            rm -rf "$VENV"
            echo "SKIP: ha-stage: the Python package index is unreachable and no cached Home Assistant environment exists ($VENV)"
            exit 0
        fi
        rm -rf "$VENV/probe"
        echo "ha-stage: installing Home Assistant Core 2024.3.3 and its pinned dependencies into $VENV (first run only)"
        INSTALL_START=$SECONDS
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade "pip==24.0"
        if ! timeout 1200 "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$REQUIREMENTS" \
                >"$VENV_ROOT/venv-ha-install.log" 2>&1; then
            tail -30 "$VENV_ROOT/venv-ha-install.log" >&2
            echo "ha-stage: installing the pinned requirements failed (log: $VENV_ROOT/venv-ha-install.log)" >&2
            exit 1
        fi
        touch "$VENV/.complete"  # only a complete install is used
        echo "ha-stage: environment installed in $((SECONDS - INSTALL_START)) s"
    fi
    exec 9>&-
fi
[[ $INSTALL_ONLY == 1 ]] && { echo "ha-stage: environment ready in $VENV"; exit 0; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/beaconbridge-ha-stage.XXXXXX")"
cleanup() {
    local status=$?
    stage_finish_work ha-stage "$WORK" "$status"
    exit "$status"
}
trap cleanup EXIT
echo "ha-stage: Home Assistant Core 2024.3.3 ($VENV), gateway $BIN"
cd "$STAGE"
status=0
"$VENV/bin/python" -u ha_stage.py "$BIN" "$WORK" || status=$?
echo "ha-stage: finished in $((SECONDS - START)) s (status $status)"
exit $status
