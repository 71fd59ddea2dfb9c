#!/usr/bin/env bash
# Builds the libFuzzer target (Tests/Fuzz) over the BeaconCore sources and runs it for $1 seconds,
# starting from the seed corpus in Tests/Fuzz/corpus (seeded from the unit tests' frames).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if [ ! -f Tests/Fuzz/FuzzEntry.swift ]; then echo "fuzz: no fuzz target yet"; exit 0; fi
mkdir -p .build/fuzz/corpus
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name BeaconFuzz \
  $(find Sources/BeaconCore Tests/Fuzz -name '*.swift' | sort) -o .build/fuzz/decoder-fuzz
cp -n Tests/Fuzz/corpus/* .build/fuzz/corpus/ 2>/dev/null || true
.build/fuzz/decoder-fuzz .build/fuzz/corpus -max_total_time="$seconds" -max_len=512 -print_final_stats=1
