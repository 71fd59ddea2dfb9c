#!/usr/bin/env bash
# Builds the BeaconBridge container image from a Debian package, with Debian's buildah and nothing from an image
# registry: docker/Containerfile over the cached slim root of scripts/container-root.sh (bookworm amd64 for the
# package of `make deb`, trixie arm64 for the one of `make deb-arm64`), the package installed by dpkg in it.
# Usage: scripts/container-image.sh DEB     e.g. .build/deb/beaconbridge_0.1.0_amd64.deb
# Tags: localhost/beaconbridge:VERSION and :latest for a package of the machine's architecture;
#       localhost/beaconbridge:VERSION-ARCH and :ARCH for another (an arm64 image made on amd64).
# Environment:
#   BB_IMAGE_SUITE    the root's Debian release (default bookworm for amd64, trixie for arm64: the packages are
#                     built for those)
#   BB_IMAGE          the image's name (default localhost/beaconbridge)
# Prints the image's size, then its first tag as the last line. Needs root (the root's files keep their owners).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=container-lib.sh
. "$REPO/scripts/container-lib.sh"
NAME=${BB_IMAGE:-localhost/beaconbridge}

log() { printf '[container-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ $# = 1 ] || { echo "usage: scripts/container-image.sh DEB" >&2; exit 64; }
deb=$1
[ -f "$deb" ] || die "no package at $deb"
[ "$(id -u)" = 0 ] || die "needs root (the root file system's owners, buildah's storage)"
command -v buildah > /dev/null && command -v podman > /dev/null || {
    log "installing buildah podman"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        --no-install-recommends buildah podman > /dev/null; } || die "could not install buildah podman"
}
arch=$(dpkg-deb -f "$deb" Architecture)
version=$(dpkg-deb -f "$deb" Version)
case $arch in
amd64) suite=${BB_IMAGE_SUITE:-bookworm} ;;
arm64) suite=${BB_IMAGE_SUITE:-trixie} ;;
*) die "no root for architecture '$arch' (amd64 or arm64)" ;;
esac
if [ "$arch" = "$(dpkg --print-architecture)" ]; then tags="$version latest"; else tags="$version-$arch $arch"; fi

t0=$SECONDS
root=$("$REPO/scripts/container-root.sh" "$suite-$arch") || die "no $suite $arch root"
ctx=$(mktemp -d "${TMPDIR:-/tmp}/bb-container-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
# The root as one archive: numeric owners, sorted, without the cache's stamp file.
tar -C "$root" --numeric-owner --sort=name --exclude=./.beaconbridge-root -cf "$ctx/rootfs.tar" . \
    || die "could not archive $root"
cp "$deb" "$ctx/beaconbridge.deb"
container_engine_conf "$ctx" > "$ctx/engine.txt" || die "could not install runc"
[ -s "$ctx/engine.txt" ] && log "buildah: $(paste -sd ';' "$ctx/engine.txt" | sed 's/;/; /g')"
t1=$SECONDS
first=""
tag_args=()
for tag in $tags; do
    tag_args+=(--tag "$NAME:$tag")
    [ -n "$first" ] || first="$NAME:$tag"
done
# The image these tags name now: removed below when the new one has taken all its tags (a stage run a day would
# otherwise leave a 90 MB image behind each time).
previous=$(buildah inspect --type image --format '{{.FromImageID}}' "$first" 2> /dev/null || true)
# --network none: the build needs nothing from outside (dpkg -i, no apt-get). --layers=false: one layer (the root
# with the package installed), no intermediate images.
buildah build --quiet --layers=false --network none --platform "linux/$arch" -f "$REPO/docker/Containerfile" \
    --build-arg VERSION="$version" \
    --build-arg REVISION="$(git -C "$REPO" rev-parse --short HEAD 2> /dev/null || echo unknown)" \
    "${tag_args[@]}" "$ctx" > "$ctx/build.log" 2>&1 \
    || { cat "$ctx/build.log" >&2; die "buildah build failed (log above)"; }
current=$(buildah inspect --type image --format '{{.FromImageID}}' "$first")
if [ -n "$previous" ] && [ "$previous" != "$current" ] \
    && [ "$(podman image inspect --format '{{len .RepoTags}}' "$previous" 2> /dev/null)" = 0 ]; then
    podman rmi "$previous" > /dev/null 2>&1 && log "removed the previous image, untagged now (${previous:0:12})"
fi
size=$(podman image inspect --format '{{.Size}}' "$first" | awk '{ printf "%.1f MB", $1 / 1e6 }')
log "$first ($suite $arch, $(basename "$deb")): $size, in $((SECONDS - t0)) s (root archive $((t1 - t0)) s, build $((SECONDS - t1)) s); tags: $tags"
echo "$first"
