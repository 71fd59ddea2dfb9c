#!/usr/bin/env bash
# Builds the arm64 (Raspberry Pi OS 64-bit / Debian 12 arm64) package. docs/install.md, "arm64".
# - On an arm64 Debian 12 machine with the Swift toolchain on PATH: the same as `make deb` (the package is
#   built for the machine's own architecture).
# - Elsewhere, with Docker buildx (and QEMU binfmt for arm64: `docker run --privileged --rm
#   tonistiigi/binfmt --install arm64`): builds in the arm64 Swift image under emulation (slow: expect tens of
#   minutes) and writes the package to .build/deb-arm64/.
# Neither path has run in this repository's CI (amd64, no Docker engine): see docs/install.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(dpkg --print-architecture 2>/dev/null || uname -m)" = arm64 ] && command -v swift >/dev/null; then
    exec make -C "$REPO" deb
fi
if ! docker buildx version >/dev/null 2>&1; then
    echo "deb-arm64: neither an arm64 machine with swift on PATH nor Docker buildx is available" >&2
    exit 69
fi
mkdir -p "$REPO/.build/deb-arm64"
docker buildx build --platform linux/arm64 -f "$REPO/packaging/deb/Dockerfile.arm64" \
    --output "type=local,dest=$REPO/.build/deb-arm64" "$REPO"
ls -l "$REPO"/.build/deb-arm64/*.deb
