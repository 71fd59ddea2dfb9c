#!/usr/bin/env bash
# Builds the arm64 Debian package (Raspberry Pi OS 64-bit / Debian 13 trixie arm64). docs/install.md,
# "Building the packages". Kept for the old name: the same as `make deb-arm64`, which cross-compiles with Debian
# trixie's own Swift (swiftlang 6.0.3) in the cached roots of scripts/cross-roots.sh on any amd64 Debian machine
# (root, Debian's archive, binfmt_misc for qemu-user) and writes .build/deb/trixie/beaconbridge_<version>_arm64.deb.
# (The Docker buildx route this script used to take never ran anywhere and is gone.)
set -euo pipefail
exec "$(dirname "$0")/cross-build.sh" arm64
