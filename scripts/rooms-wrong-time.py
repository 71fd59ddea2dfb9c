#!/usr/bin/env python3
"""Where a rooms row's wrong time comes from (docs/rooms.md, "Session 30").

Runs `beaconbridge simulate --events ROW` on copies of config/scenarios/rooms-FILE.json made as
scripts/rooms-classifier-grid.py makes them (the classifier on, the given `arbiter` keys), one run per seed, and
splits the row's wrong seconds (the simulator's: judged once a second after the warm-up, wrong when the room shown
is not the true one) into classes, each wrong second in one:
- not placed: no room shown yet;  unknown: `unknown` shown;
- transit: in a true stay shorter than the minimum stay (30 s);
- first stay: the beacon's first true stay, its room not shown yet (the first placement and what follows it);
- catch-up: a later stay (after a true move), its room not shown yet;
- wrong stay: the stay's room was shown and then left.
(The simulator's `ambiguous` class needs its geometry oracle and is not split off here: it is in the others.)
Then the right share by time since the stay began (first stay; 0-15 s, 15-70 s, 70 s on), and the moves (stays of
30 s or more after another room): caught, with the latency p50/p90, or never caught within the stay.
Each row's total is checked against the simulator's own `wrong_room_share` for the run.

Usage: scripts/rooms-wrong-time.py FIRST_SEED:SEEDS ['{"fingerprint_rule_offset": "learned"}'] [simulate args]
ROWS (default beaconbridge,fp-margin,oracle-fp) and FILES (default four-rooms,room-to-room,doorway) may be set in
the environment; BEACONBRIDGE names the binary (default .build/release/beaconbridge).
"""
import bisect, collections, json, os, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
binary = os.environ.get('BEACONBRIDGE', os.path.join(root, '.build/release/beaconbridge'))
rows = os.environ.get('ROWS', 'beaconbridge,fp-margin,oracle-fp').split(',')
files = os.environ.get('FILES', 'four-rooms,room-to-room,doorway').split(',')
first, count = (int(x) for x in sys.argv[1].split(':'))
override = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
extra = sys.argv[3:]
work = tempfile.mkdtemp(prefix='rooms-wrong-')
classes = ['not placed', 'unknown', 'transit', 'first stay', 'catch-up', 'wrong stay']
phases = ['first stay', '0-15 s', '15-70 s', '70 s on']


def breakdown(path, seed, row, acc):
    out = subprocess.run(
        [binary, 'simulate', '--scenario', path, '--seed', str(seed), '--events', row, *extra],
        capture_output=True, text=True, check=True).stdout
    changes = collections.defaultdict(list)
    truth = collections.defaultdict(list)
    summary = None
    for line in out.splitlines():
        event = json.loads(line)
        if event['type'] == 'room_change':
            changes[event['beacon_id']].append((event['time'], event['to'] or 'not_home'))
        elif event['type'] == 'room_truth':
            truth[event['beacon_id']].append((event['start'], event['end'], event['room']))
        elif event['type'] == 'room_summary':
            summary = event
    start = min(s[0] for stays in truth.values() for s in stays)
    scenario = json.load(open(path))
    duration, warmup = scenario['duration_s'], scenario.get('warmup_s', 10)
    minimum = scenario.get('minimum_stay_s', 30)
    wrong = judged = 0
    for beacon, stays in truth.items():
        made = changes.get(beacon, [])
        times = [c[0] for c in made]
        shown_once = set()
        tick = start + 1
        while tick <= start + duration:
            t = tick - start
            if t > warmup:
                stay = stays[bisect.bisect_right([s[0] for s in stays], tick) - 1]
                index = bisect.bisect_right(times, tick)
                shown = made[index - 1][1] if index else None
                judged += 1
                acc['judged'] += 1
                since = tick - stay[0]
                phase = 'first stay' if stay is stays[0] else (
                    '0-15 s' if since < 15 else '15-70 s' if since < 70 else '70 s on')
                acc[('phase', phase)] += 1
                if shown == stay[2]:
                    shown_once.add(stay[0])
                    acc[('right', phase)] += 1
                else:
                    wrong += 1
                    acc['wrong'] += 1
                    if shown is None: kind = 'not placed'
                    elif shown == 'unknown': kind = 'unknown'
                    elif stay[1] - stay[0] < minimum: kind = 'transit'
                    elif stay[0] in shown_once: kind = 'wrong stay'
                    elif stay is stays[0]: kind = 'first stay'
                    else: kind = 'catch-up'
                    acc[kind] += 1
            tick += 1
        for previous, stay in zip(stays, stays[1:]):
            if stay[1] - stay[0] < minimum or stay[2] == 'not_home' or previous[2] == 'not_home': continue
            index = bisect.bisect_right(times, stay[0])
            if index and made[index - 1][1] == stay[2]:
                acc['moves'].append(0.0)
                continue
            caught = next((c[0] for c in made[index:] if c[0] <= stay[1] and c[1] == stay[2]), None)
            acc['moves'].append(None if caught is None else caught - stay[0])
    rule = next(r for r in summary['rules'] + summary.get('oracles', []) if r['name'] == row)
    return wrong / judged, rule['wrong_room_share']


for f in files:
    scenario = json.load(open(os.path.join(root, f'config/scenarios/rooms-{f}.json')))
    arbiter = scenario.setdefault('arbiter', {})
    arbiter['fingerprint_classifier'] = True
    arbiter.update(override)
    path = os.path.join(work, f'{f}.json')
    json.dump(scenario, open(path, 'w'))
    print(f'{f} (seeds {first}-{first + count - 1}): wrong % of judged time by class; right % by time in the stay; moves')
    print('  ' + 'row'.ljust(14) + 'wrong'.ljust(7) + ''.join(c.ljust(12) for c in classes) + '| '
          + ''.join(p.ljust(12) for p in phases) + '| moves: caught p50/p90 s, never')
    for row in rows:
        acc = collections.Counter()
        acc['moves'] = []
        for seed in range(first, first + count):
            mine, theirs = breakdown(path, seed, row, acc)
            if abs(mine - theirs) > 0.0005:
                print(f'  note: {row} seed {seed}: {100 * mine:.2f} % here, {100 * theirs:.2f} % by the simulator')
        share = lambda k: f"{100 * acc[k] / acc['judged']:.1f}"
        right = lambda p: f"{100 * acc[('right', p)] / acc[('phase', p)]:.1f}" if acc[('phase', p)] else '-'
        caught = sorted(m for m in acc['moves'] if m is not None)
        never = sum(m is None for m in acc['moves'])
        p = lambda q: f'{caught[int(q * (len(caught) - 1))]:.0f}' if caught else '-'
        print('  ' + row.ljust(14) + share('wrong').ljust(7) + ''.join(share(c).ljust(12) for c in classes) + '| '
              + ''.join(right(ph).ljust(12) for ph in phases)
              + f'| {len(caught)} {p(0.5)}/{p(0.9)}, {never}')
    print('  ' + 'judged time %'.ljust(21 + 12 * len(classes)) + '| '
          + ''.join(f"{100 * acc[('phase', ph)] / acc['judged']:.1f}".ljust(12) for ph in phases))
