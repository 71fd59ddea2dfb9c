#!/usr/bin/env bash
# The Home Assistant stage against today's Core (docs/home-assistant.md, "Verified against Home Assistant"): the
# same checks as scripts/ha-stage.sh, but Home Assistant is the newest Core that supports Debian 13's Python 3.13
# (pinned with every dependency in Tests/HomeAssistant/requirements-trixie.txt; Core 2026.3 and later need
# Python 3.14), run chrooted in a small trixie root (scripts/python-root.sh). Only Home Assistant runs in the root;
# the stage's driver (Tests/HomeAssistant/ha_stage.py, in the 2024.3.3 stage's environment, for aiohttp, PyJWT
# and paho-mqtt), the private mosquitto and the built gateway run on the host, and all of them meet on loopback
# (a chroot shares the network namespace).
#
#   scripts/ha-stage-trixie.sh [BEACONBRIDGE_BINARY]      (default .build/debug/beaconbridge)
#   scripts/ha-stage-trixie.sh --install-only              (only create the root and the cached environments)
#
# The Core's virtual environment lives in ~/.cache/beaconbridge/venv-ha-trixie-<hash of requirements-trixie.txt>
# (HA_STAGE_VENV_ROOT overrides ~/.cache/beaconbridge); that directory is bind-mounted at the same path inside the
# root, where the environment is made and used. The stage's run is in a private mount namespace (unshare -m) that
# holds the root's /proc, /dev, the work directory and the cache directory: the mounts vanish with it, on every
# exit path. Needs root (chroot, mounts): without it, or where the Python package index cannot be reached and no
# cached environment exists, the stage prints a SKIP line and succeeds. HA_STAGE_KEEP=1 keeps the work directory.
set -euo pipefail
# shellcheck source=stage-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/stage-lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INSTALL_ONLY=0
[[ "${1:-}" == "--install-only" ]] && { INSTALL_ONLY=1; shift; }
BIN="${1:-$ROOT/.build/debug/beaconbridge}"
STAGE="$ROOT/Tests/HomeAssistant"
REQUIREMENTS="$STAGE/requirements-trixie.txt"
HA_VERSION="$(sed -n 's/^homeassistant==//p' "$REQUIREMENTS")"
START=$SECONDS

[[ $INSTALL_ONLY == 1 || -x "$BIN" ]] || { echo "ha-stage-trixie: $BIN is not built (run swift build first)" >&2; exit 69; }
if [[ "$(id -u)" != 0 ]]; then
    echo "SKIP: ha-stage-trixie: needs root (a chroot into the trixie root and its mounts)"
    exit 0
fi

# The driver's environment: the 2024.3.3 stage's (made here when missing; it SKIPs without the package index).
VENV_ROOT="${HA_STAGE_VENV_ROOT:-$HOME/.cache/beaconbridge}"
DRIVER_VENV="$VENV_ROOT/venv-ha-$(sha256sum "$STAGE/requirements.txt" | cut -c1-16)"
if [[ ! -f "$DRIVER_VENV/.complete" ]]; then
    "$ROOT/scripts/ha-stage.sh" --install-only
    [[ -f "$DRIVER_VENV/.complete" ]] || {
        echo "SKIP: ha-stage-trixie: the Python package index is unreachable and no cached environment exists"
        exit 0
    }
fi

PYROOT="$("$ROOT/scripts/python-root.sh")"
VENV="$VENV_ROOT/venv-ha-trixie-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"

# Runs "$@" in a private mount namespace where $PYROOT has /proc, /dev, the cache directory and (when given as
# $WORK) the work directory mounted at their host paths. The mounts go when the namespace's last process exits.
in_root_namespace() {
    unshare -m --propagation private bash -c '
        set -e
        root=$1 cache=$2 work=$3; shift 3
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mkdir -p "$root$cache"; mount --bind "$cache" "$root$cache"
        if [[ -n "$work" ]]; then mkdir -p "$root$work"; mount --bind "$work" "$root$work"; fi
        cp /etc/resolv.conf "$root/etc/resolv.conf"
        # pip in the root trusts what the host trusts (a proxy'"'"'s CA, say); the host'"'"'s find-links are not there.
        mount --bind -o ro /etc/ssl/certs "$root/etc/ssl/certs"
        export PIP_FIND_LINKS=
        exec "$@"
    ' _ "$PYROOT" "$VENV_ROOT" "${WORK:-}" "$@"
}

if [[ ! -f "$VENV/.complete" ]]; then
    mkdir -p "$VENV_ROOT"
    exec 9>"$VENV_ROOT/venv-ha-trixie.lock"
    flock 9
    if [[ ! -f "$VENV/.complete" ]]; then
        rm -rf "$VENV"
        in_root_namespace chroot "$PYROOT" python3 -m venv "$VENV"
        if ! in_root_namespace timeout 60 chroot "$PYROOT" "$VENV/bin/python" -m pip download --no-deps \
                --no-cache-dir -q -d "$VENV/probe" "josepy==1.15.0" > /dev/null 2>&1; then
            rm -rf "$VENV"
            echo "SKIP: ha-stage-trixie: the Python package index is unreachable and no cached environment exists ($VENV)"
            exit 0
        fi
        rm -rf "$VENV/probe"
        echo "ha-stage-trixie: installing Home Assistant Core $HA_VERSION and its pinned dependencies into $VENV (first run only)"
        INSTALL_START=$SECONDS
        if ! in_root_namespace timeout 1200 chroot "$PYROOT" "$VENV/bin/python" -m pip install -q \
                --disable-pip-version-check --no-input --no-cache-dir -r /dev/stdin \
                < "$REQUIREMENTS" > "$VENV_ROOT/venv-ha-trixie-install.log" 2>&1; then  # the file is not in the root
            tail -30 "$VENV_ROOT/venv-ha-trixie-install.log" >&2
            echo "ha-stage-trixie: installing the pinned requirements failed (log: $VENV_ROOT/venv-ha-trixie-install.log)" >&2
            exit 1
        fi
        touch "$VENV/.complete"  # only a complete install is used
        echo "ha-stage-trixie: environment installed in $((SECONDS - INSTALL_START)) s"
    fi
    exec 9>&-
fi
[[ $INSTALL_ONLY == 1 ]] && { echo "ha-stage-trixie: environment ready in $VENV (root $PYROOT)"; exit 0; }

WORK="$(mktemp -d /tmp/beaconbridge-ha-trixie.XXXXXX)"
cleanup() {
    local status=$?
    rmdir "$PYROOT$WORK" 2>/dev/null || true  # the mount point (the mount itself went with the namespace)
    stage_finish_work ha-stage-trixie "$WORK" "$status"
    exit "$status"
}
trap cleanup EXIT
echo "ha-stage-trixie: Home Assistant Core $HA_VERSION on $(chroot "$PYROOT" python3 -V) in $PYROOT ($VENV), gateway $BIN"
cd "$STAGE"
status=0
export HA_STAGE_HA_VERSION="$HA_VERSION"
export HA_STAGE_HA_PYTHON="[\"chroot\", \"$PYROOT\", \"$VENV/bin/python\"]"
in_root_namespace "$DRIVER_VENV/bin/python" -u ha_stage.py "$BIN" "$WORK" || status=$?
echo "ha-stage-trixie: finished in $((SECONDS - START)) s (status $status)"
exit $status
