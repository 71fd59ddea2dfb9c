#!/usr/bin/env bash
# Usage: scripts/reference-venv.sh REQUIREMENTS_FILE
# Creates (once) a virtual environment with the pinned reference packages of REQUIREMENTS_FILE under
# ~/.cache/beaconbridge/venv-<name>-<hash of the file> and prints its python on stdout. Tests use these
# packages as oracles. Without Python's venv module or without PyPI it prints one `SKIP: ...` line on stdout and
# exits 0 with no python path, so callers skip their oracle checks instead of failing.
# Time: about 20-40 s the first time (4 wheels), a few milliseconds once cached.
set -uo pipefail
requirements=$1
name=$(basename "$requirements" .txt)
hash=$(sha256sum "$requirements" | cut -c1-16)
cache=${BEACONBRIDGE_CACHE:-$HOME/.cache/beaconbridge}
dir=$cache/venv-$name-$hash
mkdir -p "$cache"
exec 9>"$cache/venv-$name.lock"
flock 9
if [ -f "$dir/.complete" ] && [ -x "$dir/bin/python" ]; then
  echo "$dir/bin/python"
  exit 0
fi
rm -rf "$dir"
if ! python3 -m venv "$dir" >/dev/null 2>&1; then
  rm -rf "$dir"
  echo "SKIP: $name reference: python3 -m venv is not available (apt-get install python3-venv)"
  exit 0
fi
if ! timeout 300 "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary :all: -r "$requirements" >"$cache/venv-$name.log" 2>&1; then
  rm -rf "$dir"
  echo "SKIP: $name reference: cannot install the pinned packages from PyPI (see $cache/venv-$name.log)"
  exit 0
fi
touch "$dir/.complete"
echo "$dir/bin/python"
