#!/usr/bin/env bash
# Writes scripts/link-order.txt, the functions the daemon runs, hottest first, which the release link hands to lld
# (--symbol-ordering-file, the Makefile's LINK_ORDER_FLAGS) so that they lie together at the start of the text
# instead of scattered over 9 MB of it (docs/daemon-bench.md, session 28: the kernel maps 64 kB around every page
# the process faults in, so scattered code costs its whole neighbourhood in RSS).
# It runs `beaconbridge-bench live` (live-500, every-500) and `daemon` (20 s) with the gateway under callgrind, which
# sees every function executed, start-up included, and lists the binary's own ones by their self cost. Behaviour does
# not depend on the list: a name the binary no longer has is skipped, a function not listed is placed after the
# listed ones. Rerun it when the daemon's code has moved a lot (a release binary's resident text, scripts/text-pages.py,
# tells). Needs valgrind (3.19 reads no DWARF 5, so the gateway runs from a copy without debug sections) and about
# 5 minutes; holds /tmp/bb-build.lock while it runs.
# Usage: scripts/link-order.sh [RELEASE_BIN [BENCH_BIN]]   (default .build/release/beaconbridge{,-bench})
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "${1:-$REPO/.build/release/beaconbridge}")
BENCH=$(realpath "${2:-$REPO/.build/release/beaconbridge-bench}")
command -v valgrind > /dev/null || { echo "link-order: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
objcopy --strip-debug "$BIN" "$WORK/beaconbridge"
cat > "$WORK/gateway.sh" << EOF
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$WORK/callgrind.%p --demangle=no --dump-line=no --dump-instr=no \
    --read-var-info=no $WORK/beaconbridge "\$@"
EOF
chmod +x "$WORK/gateway.sh"
exec {lock}> /tmp/bb-build.lock
flock "$lock"
BENCH_GATEWAY=$WORK/gateway.sh BENCH_LIVE_RUNS=live-500,every-500 "$BENCH" live > "$WORK/live.txt" 2>&1
BENCH_GATEWAY=$WORK/gateway.sh BENCH_DAEMON_SECONDS=20 "$BENCH" daemon > "$WORK/daemon.txt" 2>&1
exec {lock}>&-
python3 - "$REPO/scripts/link-order.txt" "$WORK"/callgrind.* << 'EOF'
# Each callgrind file: `ob=`/`fn=`/`cfn=` name the object and function (compressed as `(id) name` once, then `(id)`);
# cost lines after `fn=` are its self cost, the line after `calls=` is an inclusive cost of the call (skipped).
import sys, re, collections
cost = collections.Counter()
for path in sys.argv[2:]:
    names = {}; ob = None; fn = None; call_ob = None; after_call = False
    for line in open(path, errors='replace'):
        m = re.match(r'^(c?ob|c?fn|c?f[lie])=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
        if m:
            kind, idx, name = m.groups()
            space = 'ob' if kind.endswith('ob') else 'fn' if kind.endswith('fn') else 'file'
            if name is not None: names[(space, idx)] = name
            if kind == 'ob': ob = names[('ob', idx)]; call_ob = None
            elif kind == 'fn': fn = (ob, names[('fn', idx)]); cost[fn] += 0
            elif kind == 'cob': call_ob = names[('ob', idx)]
            elif kind == 'cfn': cost[(call_ob or ob, names[('fn', idx)])] += 0; call_ob = None
            continue
        if line.startswith('calls='): after_call = True; continue
        if fn and (line[:1].isdigit() or line[:1] in ('+', '-', '*')):
            if after_call: after_call = False; continue
            parts = line.split()
            if fn and len(parts) >= 2 and parts[1].isdigit(): cost[fn] += int(parts[1])
ordered = collections.OrderedDict()
for (ob, fn), c in sorted(cost.items(), key=lambda kv: -kv[1]):
    fn = re.sub(r"'\d+$", '', fn)  # callgrind's recursion levels
    if ob and ob.endswith('/beaconbridge') and not fn.startswith('0x'):
        ordered.setdefault(fn, None)
with open(sys.argv[1], 'w') as out:
    out.writelines(f + '\n' for f in ordered)
print(f'{len(ordered)} functions -> {sys.argv[1]}')
EOF
