#!/usr/bin/env bash
# The Swift suites of an already built package (`swift build --build-tests`): the log goes to .build/test.log,
# then each suite's time (scripts/suite-times.sh); exits with `swift test`'s status.
# The suites run with scripts/fd-guard.c preloaded: a descriptor closed twice in the test process or the gateway
# binary (close(2) failing with EBADF) fails the run, with the backtrace, symbolised where the toolchain can.
# Usage: scripts/swift-tests.sh [SWIFT]
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${1:-swift}
toolchain=$(dirname "$(command -v "$swift")")
guard_dir=.build/fd-guard
rm -rf "$guard_dir" && mkdir -p "$guard_dir"
preload=()
compiler=$(command -v cc || command -v "$toolchain/clang" || true)
if [ -n "$compiler" ] && "$compiler" -shared -fPIC -O1 -o .build/fd-guard.so scripts/fd-guard.c -ldl; then
    preload=(env LD_PRELOAD="$PWD/.build/fd-guard.so" FD_GUARD_DIR="$PWD/$guard_dir")
else
    echo "swift-tests: no C compiler for scripts/fd-guard.c: running without the double-close guard" >&2
fi
"${preload[@]}" "$swift" test --skip-build 2>&1 | tee .build/test.log
status=${PIPESTATUS[0]}
scripts/suite-times.sh .build/test.log
if compgen -G "$guard_dir/*.log" > /dev/null; then
    echo "FAIL: a descriptor was closed twice (close(2) failed with EBADF); backtraces:"
    symbolizer="$toolchain/llvm-symbolizer"
    for log in "$guard_dir"/*.log; do
        while IFS= read -r line; do
            # Frames of our binaries are printed as BINARY(+0xOFFSET)[ADDRESS]: symbolise the offset.
            if [[ $line =~ ^(/[^\(]*)\(\+(0x[0-9a-f]+)\) ]] && [ -x "$symbolizer" ]; then
                where=$("$symbolizer" --obj="${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" 2>/dev/null | head -n 2 \
                    | paste -sd ' ' | { "$toolchain/swift-demangle" --simplified 2>/dev/null || cat; })
                echo "  $line  $where"
            else
                echo "  $line"
            fi
        done < "$log"
    done
    [ "$status" = 0 ] && status=1
fi
exit "$status"
