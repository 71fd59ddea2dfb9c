#!/usr/bin/env bash
# Compiles the pure core's targets (Package.swift, docs/architecture.md "The core's targets") outside SwiftPM, one
# static library and module each, in dependency order, for the fuzz targets (scripts/fuzz.sh, scripts/fuzz-config.sh):
# SwiftPM cannot build one executable with libFuzzer's main and sanitizers beside the test bundle.
#   scripts/fuzz-core.sh OUT [SWIFTC FLAGS...]   modules in OUT/NAME.swiftmodule, libraries in OUT/libNAME.a
# Built with -enable-testing, so a harness reaches the internals it drives with `@testable import`. SecureDFU imports
# zlib (CZlib): a harness importing it needs the same -I and module map (zlib_flags) and links -lz.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1; shift
mkdir -p "$out"
# Bottom to top; keep in the order of Package.swift's core targets (a module before every module that imports it).
core_modules=(BeaconModel BeaconConfigReading BeaconFormats BeaconTracking BeaconRooms DeviceProtocols SecureDFU
    BeaconEvents BeaconDelivery BeaconConfig)
zlib_flags=(-I Sources/CZlib -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap)
for module in "${core_modules[@]}"; do
    swiftc "$@" "${zlib_flags[@]}" -parse-as-library -enable-testing -package-name beaconbridge -emit-library -static \
      -emit-module -module-name "$module" -I "$out" -emit-module-path "$out/$module.swiftmodule" -o "$out/lib$module.a" \
      $(find "Sources/$module" -name '*.swift' | sort)
done
