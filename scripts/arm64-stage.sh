#!/usr/bin/env bash
# The arm64 stage of `make test` (docs/testing.md; alone: `make arm64-stage`): builds the arm64 Debian package with
# trixie's Swift 6.0.3 (scripts/cross-build.sh; the cached roots of scripts/cross-roots.sh, created on a machine's
# first run, in the background from the start of `make test`) and runs its smoke tests under qemu-user
# (scripts/arm64-smoke.sh) against the amd64 release binary. Prints the stage's times (the wait for the machine's
# build lock, the build, the packaging, the smoke tests).
# Prints SKIP and succeeds only where it cannot run at all: not root, or no binfmt_misc for qemu-user.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: arm64 stage: needs root (debootstrap and chroot into the cached roots)"
    exit 0
fi
if [ ! -e /proc/sys/fs/binfmt_misc/status ] && ! mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null; then
    echo "SKIP: arm64 stage: binfmt_misc is not mounted and cannot be mounted here (qemu-user cannot run the arm64 root)"
    exit 0
fi
mkdir -p "$REPO/.build"
"$REPO/scripts/cross-build.sh" arm64 > "$REPO/.build/arm64-stage.log" 2>&1 \
    || { tail -n 40 "$REPO/.build/arm64-stage.log"; echo "FAIL: arm64 stage: the arm64 package did not build (log: .build/arm64-stage.log)"; exit 1; }
grep -E '^\[cross .*\] (roots ready|waited|built|packaged|arm64 package)' "$REPO/.build/arm64-stage.log" || true
built=$SECONDS
status=0
"$REPO/scripts/arm64-smoke.sh" "$(tail -n 1 "$REPO/.build/arm64-stage.log")" || status=$?
echo "arm64 stage: package $((built - started)) s, smoke tests $((SECONDS - built)) s, total $((SECONDS - started)) s"
exit $status
