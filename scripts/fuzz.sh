#!/usr/bin/env bash
# Builds the libFuzzer target (Tests/Fuzz) over the core's modules (scripts/fuzz-core.sh) and runs it for a bounded time, starting from
# the seed corpus in Tests/Fuzz/corpus (seeded from the unit tests' frames).
#   scripts/fuzz.sh [SECONDS]        build, then run for SECONDS (default 60): `make fuzz`
#   scripts/fuzz.sh --build          build only (.build/fuzz/decoder-fuzz); .ci/run starts it in the background at
#                                    nice 19 beside `make test`, so the ASan build (about 7 minutes) uses idle cores
#   scripts/fuzz.sh --run [SECONDS]  run the binary --build made, for SECONDS (default 60)
#   scripts/fuzz.sh --typecheck      type-check both fuzz targets without building them against the debug
#                                    build's modules (`swift build` first; they are built with testing enabled,
#                                    as the harnesses' `@testable import` needs). `make check` starts it
#                                    in the background at nice 19 beside the Swift suites and waits for it after
#                                    them (--wait-typecheck), so a change that breaks a fuzz harness fails there
#                                    rather than only in .ci/run's fuzz build
#   scripts/fuzz.sh --wait-typecheck waits (at most 15 minutes) for a background --typecheck to end, prints its
#                                    log and exits with its status
set -euo pipefail
cd "$(dirname "$0")/.."
mode=both
case "${1:-}" in
--build) mode=build; shift ;;
--run) mode=run; shift ;;
--typecheck)
    mkdir -p .build
    rm -f .build/fuzz-typecheck.status
    status=0
    swiftc -typecheck -parse-as-library -module-name BeaconFuzz -I .build/debug/Modules -I Sources/CZlib \
      -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap $(find Tests/Fuzz -name '*.swift' | sort) || status=$?
    if [ "$status" = 0 ]; then
        swiftc -typecheck -I .build/debug/Modules -I Sources/CYAML \
          -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap Tests/FuzzConfig/ConfigFuzzEntry.swift || status=$?
    fi
    echo "$status" > .build/fuzz-typecheck.status
    exit "$status" ;;
--wait-typecheck)
    for _ in $(seq 900); do [ -f .build/fuzz-typecheck.status ] && break; sleep 1; done
    cat .build/fuzz-typecheck.log 2>/dev/null || true
    [ -f .build/fuzz-typecheck.status ] || { echo "fuzz: the background type-check did not end in 15 minutes" >&2; exit 1; }
    status=$(cat .build/fuzz-typecheck.status)
    [ "$status" = 0 ] && echo "fuzz: both fuzz targets type-check"
    exit "$status" ;;
esac
seconds="${1:-60}"
case $seconds in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 64 ;; esac
if [ ! -f Tests/Fuzz/FuzzEntry.swift ]; then echo "fuzz: no fuzz target yet"; exit 0; fi
mkdir -p .build/fuzz/corpus
if [ "$mode" != run ]; then
    started=$SECONDS
    flags=(-sanitize=fuzzer,address -O -g)
    scripts/fuzz-core.sh .build/fuzz/core "${flags[@]}"
    # The libraries the harnesses use, importers before what they import (the static link resolves left to right).
    libs=()
    for lib in SecureDFU DeviceProtocols BeaconTracking BeaconFormats BeaconConfigReading BeaconModel; do
        libs+=(".build/fuzz/core/lib$lib.a")
    done
    swiftc "${flags[@]}" -parse-as-library -module-name BeaconFuzz -I .build/fuzz/core -I Sources/CZlib \
      -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap \
      $(find Tests/Fuzz -name '*.swift' | sort) "${libs[@]}" -lz -o .build/fuzz/decoder-fuzz
    echo "fuzz: built .build/fuzz/decoder-fuzz in $((SECONDS - started)) s"
    [ "$mode" = build ] && exit 0
fi
[ -x .build/fuzz/decoder-fuzz ] || { echo "fuzz: no .build/fuzz/decoder-fuzz: run scripts/fuzz.sh --build first" >&2; exit 1; }
cp -n Tests/Fuzz/corpus/* .build/fuzz/corpus/ 2>/dev/null || true
.build/fuzz/decoder-fuzz .build/fuzz/corpus -max_total_time="$seconds" -max_len=512 -print_final_stats=1
