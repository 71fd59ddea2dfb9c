#!/usr/bin/env python3
"""The rooms classifier against the rule on the six rooms files (docs/rooms.md, "Session 23").

Runs `beaconbridge simulate` on copies of config/scenarios/rooms-*.json with the classifier on and the given
`arbiter` keys, and prints per file wrong % / false switches per beacon-hour / change p95 s of the rule
(beaconbridge), calibrated, distance-margin, the classifier (trained), the fingerprint margin rule (fp-margin,
docs/rooms.md "Session 29"; the given keys apply to it too, e.g. '{"fingerprint_rule_offset": "learned"}') and
oracle-fp and the evidence floor oracle-fp-felt (oracle-fp told the posture of the stay and the blocking too,
docs/rooms.md "The evidence floor").

Usage: scripts/rooms-classifier-grid.py FIRST_SEED:SEEDS ['{"fingerprint_observation_s": 5}'] [simulate args, e.g. --ablations]
BEACONBRIDGE names the binary (default .build/release/beaconbridge).
"""
import json, os, subprocess, sys, tempfile
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
binary = os.environ.get('BEACONBRIDGE', os.path.join(root, '.build/release/beaconbridge'))
work = tempfile.mkdtemp(prefix='rooms-grid-')
seeds = sys.argv[1]; first, count = seeds.split(':')
override = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
extra = sys.argv[3:]
files = ['four-rooms','corridor','room-to-room','doorway','open-plan','outage']
rows = {}
for f in files:
    d = json.load(open(os.path.join(root, f'config/scenarios/rooms-{f}.json')))
    a = d.setdefault('arbiter', {}); a['fingerprint_classifier'] = True; a.update(override)
    path = os.path.join(work, f'{f}.json'); json.dump(d, open(path, 'w'))
    out = subprocess.run([binary,'simulate','--scenario',path,'--seed',first,'--seeds',count,'--summary-only',*extra], capture_output=True, text=True).stdout
    acc = {}
    for line in out.splitlines():
        if not line.startswith('{'): continue
        s = json.loads(line)
        if s.get('type') != 'room_summary': continue
        for r in s['rules'] + s.get('oracles', []):
            x = acc.setdefault(r['name'], {'wrong':0,'bh':0,'fs':0,'p95':[], 'dark':[]})
            x['wrong'] += r['wrong_room_share']*r['beacon_hours']; x['bh'] += r['beacon_hours']; x['fs'] += r['false_switches']
            x['p95'].append(r['room_change_latency_s']['p95'])
            if r.get('dark_room_elsewhere_share') is not None: x['dark'].append(r['dark_room_elsewhere_share'])
    rows[f] = acc
names = ['beaconbridge','calibrated','distance-margin','trained','fp-margin','oracle-fp','oracle-fp-felt']
# `--ablations` (docs/rooms.md, "Session 28"): the classifier's ablation rows too.
if '--ablations' in extra: names += ['fp+configured','fp+offset','fp+true-levels','fp+fixed-levels']
print('file'.ljust(14) + ''.join(n.ljust(24) for n in names))
for f in files:
    line = f.ljust(14)
    for n in names:
        x = rows[f].get(n)
        if not x: line += '-'.ljust(24); continue
        p = max(x['p95']) if x['p95'] else 0
        line += f"{100*x['wrong']/x['bh']:.1f}/{x['fs']/x['bh']:.2f}/{p:.0f}".ljust(24)
    print(line)
