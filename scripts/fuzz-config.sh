#!/usr/bin/env bash
# Fuzzes the configuration loader (libyaml + tree builder + section decoders) with libFuzzer and
# AddressSanitizer for $1 seconds, starting from the shipped example and the broken test fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build/fuzz-config
mkdir -p "$out/corpus"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)
scripts/fuzz-core.sh "$out/core" "${flags[@]}"
swiftc "${flags[@]}" -package-name beaconbridge -emit-library -static -emit-module -module-name YAMLConfig \
  -I "$out" -I "$out/core" -I Sources/CYAML -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
  -emit-module-path "$out/YAMLConfig.swiftmodule" -o "$out/libYAMLConfig.a" \
  $(find Sources/YAMLConfig -name '*.swift' | sort)
swiftc "${flags[@]}" -I "$out" -I "$out/core" -I Sources/CYAML -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap \
  Tests/FuzzConfig/ConfigFuzzEntry.swift "$out/libYAMLConfig.a" \
  $(for m in BeaconConfig BeaconDelivery BeaconEvents SecureDFU DeviceProtocols BeaconRooms BeaconTracking BeaconFormats \
    BeaconConfigReading BeaconModel; do echo "$out/core/lib$m.a"; done) -lyaml \
  -o "$out/config-fuzz"
cp -n config/beaconbridge.yaml Tests/Fixtures/config/*.yaml "$out/corpus/" 2>/dev/null || true
"$out/config-fuzz" "$out/corpus" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1
