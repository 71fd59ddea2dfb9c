#!/usr/bin/env python3
# Which pages of a running gateway's own binary are mapped, by ELF section, and how they cluster in the kernel's
# fault-around windows (docs/daemon-bench.md, session 28): reads /proc/PID/maps, /proc/PID/pagemap (root),
# /proc/PID/smaps and the binary's section headers (readelf). With --touched SECONDS it also clears the process's
# referenced bits (/proc/PID/clear_refs 1), waits, and prints smaps' Referenced per mapping: the pages the process
# really touched in that time (x86 sets the accessed bit per page), next to what is mapped.
# Usage: scripts/text-pages.py PID BINARY [--touched SECONDS] [--window KB]
import sys, struct, subprocess, collections, time, os

pid = int(sys.argv[1]); binary = os.path.realpath(sys.argv[2])
args = sys.argv[3:]
touched = float(args[args.index('--touched') + 1]) if '--touched' in args else None
window = int(args[args.index('--window') + 1]) * 1024 if '--window' in args else 65536
PAGE = 4096

maps = []
for line in open(f'/proc/{pid}/maps'):
    p = line.split()
    if len(p) >= 6 and os.path.realpath(p[5]) == binary:
        lo, hi = [int(x, 16) for x in p[0].split('-')]
        maps.append((lo, hi, p[1], int(p[2], 16)))
base = maps[0][0] - maps[0][3]

# sections by virtual address (relative to the load base)
sections = []
for line in subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True).stdout.split('\n'):
    line = line.replace('[ ', '[')
    p = line.split()
    if len(p) > 6 and p[0].startswith('[') and p[0] != '[Nr]':
        name, addr, size = p[1], int(p[3], 16), int(p[5], 16)
        if addr and size and p[2] != 'NOBITS':
            sections.append((addr, addr + size, name))
sections.sort()

def section_of(va):
    names = [n for a, b, n in sections if a < va + PAGE and b > va]
    return '+'.join(names) if names else '(gap)'

pm = open(f'/proc/{pid}/pagemap', 'rb')
print(f'binary {binary}, load base {base:#x}')
for lo, hi, perm, off in maps:
    pm.seek(lo // PAGE * 8); data = pm.read((hi - lo) // PAGE * 8)
    present = [(struct.unpack_from('<Q', data, i * 8)[0] >> 63) & 1 for i in range((hi - lo) // PAGE)]
    n = (hi - lo) // PAGE
    print(f'\nmapping {perm} {lo - base:#x}-{hi - base:#x}: {n * 4} kB, {sum(present) * 4} kB present')
    if 'x' not in perm and 'r--p' not in perm:
        continue
    by = collections.Counter(); total = collections.Counter()
    for i in range(n):
        va = lo - base + i * PAGE
        s = section_of(va)
        total[s] += 1
        by[s] += present[i]
    for s, t in sorted(total.items(), key=lambda kv: -kv[1]):
        if t * 4 >= 64:
            print(f'  {s:40s} {by[s] * 4:7d} of {t * 4:7d} kB present')
    # fault-around windows: aligned blocks of `window` bytes (virtual address), how full
    per = window // PAGE
    fill = collections.Counter()
    first = lo // window; last = (hi - 1) // window
    for w in range(first, last + 1):
        idx = [i for i in range((w * window - lo) // PAGE, (w * window - lo) // PAGE + per) if 0 <= i < n]
        k = sum(present[i] for i in idx)
        fill[(k, len(idx))] += 1
    full = sum(c for (k, t), c in fill.items() if k == t and k > 0)
    empty = sum(c for (k, t), c in fill.items() if k == 0)
    partial = sum(c for (k, t), c in fill.items() if 0 < k < t)
    print(f'  {window // 1024} kB windows: {full} full, {partial} partial, {empty} empty of {last - first + 1}')
    if partial:
        print('  partial windows by pages present: ' + ', '.join(
            f'{k}/{t}: {c}' for (k, t), c in sorted(fill.items()) if 0 < k < t))

def smaps():
    out = {}; cur = None
    for line in open(f'/proc/{pid}/smaps'):
        p = line.split()
        if '-' in p[0] and len(p) >= 5 and not p[0].endswith(':'):
            cur = (p[0], p[1], p[5] if len(p) > 5 else '')
            out[cur] = {}
        elif p[0].endswith(':') and len(p) >= 2 and p[1].isdigit():
            out[cur][p[0][:-1]] = int(p[1])
    return out

if touched is not None:
    with open(f'/proc/{pid}/clear_refs', 'w') as f:
        f.write('1')
    time.sleep(touched)
    s = smaps()
    print(f'\nreferenced within {touched:g} s after clear_refs (kB referenced / resident):')
    rows = collections.Counter(); res = collections.Counter()
    for (rng, perm, path), v in s.items():
        key = (os.path.basename(path) or '[anon]') + ' ' + perm
        rows[key] += v.get('Referenced', 0); res[key] += v.get('Rss', 0)
    for k, v in sorted(res.items(), key=lambda kv: -kv[1]):
        if v >= 100:
            print(f'  {k:45s} {rows[k]:7d} / {v:7d}')
    print(f'  total {sum(rows.values())} / {sum(res.values())}')
