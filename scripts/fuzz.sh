#!/usr/bin/env bash
# Builds the libFuzzer target (Tests/Fuzz) over the BeaconCore sources and runs it for a bounded time, starting from
# the seed corpus in Tests/Fuzz/corpus (seeded from the unit tests' frames).
#   scripts/fuzz.sh [SECONDS]        build, then run for SECONDS (default 60): `make fuzz`
#   scripts/fuzz.sh --build          build only (.build/fuzz/decoder-fuzz); .ci/run starts it in the background at
#                                    nice 19 beside `make test`, so the ASan build (about 7 minutes) uses idle cores
#   scripts/fuzz.sh --run [SECONDS]  run the binary --build made, for SECONDS (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=both
case "${1:-}" in --build) mode=build; shift ;; --run) mode=run; shift ;; esac
seconds="${1:-60}"
case $seconds in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 64 ;; esac
if [ ! -f Tests/Fuzz/FuzzEntry.swift ]; then echo "fuzz: no fuzz target yet"; exit 0; fi
mkdir -p .build/fuzz/corpus
if [ "$mode" != run ]; then
    started=$SECONDS
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name BeaconFuzz \
      $(find Sources/BeaconCore Tests/Fuzz -name '*.swift' | sort) -o .build/fuzz/decoder-fuzz
    echo "fuzz: built .build/fuzz/decoder-fuzz in $((SECONDS - started)) s"
    [ "$mode" = build ] && exit 0
fi
[ -x .build/fuzz/decoder-fuzz ] || { echo "fuzz: no .build/fuzz/decoder-fuzz: run scripts/fuzz.sh --build first" >&2; exit 1; }
cp -n Tests/Fuzz/corpus/* .build/fuzz/corpus/ 2>/dev/null || true
.build/fuzz/decoder-fuzz .build/fuzz/corpus -max_total_time="$seconds" -max_len=512 -print_final_stats=1
