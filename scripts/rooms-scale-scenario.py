#!/usr/bin/env python3
"""A large rooms site for scripts/rooms-scale.sh (docs/rooms-scale.md): GATEWAYS rooms of 8 x 6 m in a grid of
six columns, one gateway each, heavy internal walls (6.9 dB, COST 231) with a 1.2 m doorway in every wall
between neighbours, and BEACONS beacons advertising once a second: nine in ten at rest at a random spot of a
random room, one in ten walking to a neighbouring room every 40-70 s (4 s through the door).

Usage: rooms-scale-scenario.py GATEWAYS BEACONS DURATION_S > scenario.json   (deterministic: seed 46)
"""
import json
import random
import sys

gateways, beacons, duration = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
if not (1 <= gateways <= 64 and 1 <= beacons <= 4000 and 10 <= duration <= 3600):
    sys.exit("rooms-scale-scenario.py: GATEWAYS 1-64, BEACONS 1-4000, DURATION_S 10-3600")
rng = random.Random(46)
COLUMNS, W, H, DOOR = 6, 8.0, 6.0, 1.2
rows = (gateways + COLUMNS - 1) // COLUMNS
rooms, cells = [], {}
for index in range(gateways):
    col, row = index % COLUMNS, index // COLUMNS
    name = "r%02d" % (index + 1)
    rooms.append({"name": name, "x": [col * W, (col + 1) * W], "y": [row * H, (row + 1) * H]})
    cells[(col, row)] = name
walls = []
for (col, row) in cells:
    # The wall on the room's right (to the next column) and the one above it (to the next row), each with a
    # doorway in its middle when the neighbour exists.
    x, y = (col + 1) * W, row * H
    if (col + 1, row) in cells:
        mid = y + H / 2
        walls.append({"from": [x, y], "to": [x, mid - DOOR / 2], "attenuation_db": 6.9})
        walls.append({"from": [x, mid + DOOR / 2], "to": [x, y + H], "attenuation_db": 6.9})
    x, y = col * W, (row + 1) * H
    if (col, row + 1) in cells:
        mid = x + W / 2
        walls.append({"from": [x, y], "to": [mid - DOOR / 2, y], "attenuation_db": 6.9})
        walls.append({"from": [mid + DOOR / 2, y], "to": [x + W, y], "attenuation_db": 6.9})
gateway_list = []
for (col, row), name in sorted(cells.items(), key=lambda item: item[1]):
    gateway_list.append({
        "id": "gw-" + name[1:], "x": col * W + W / 2 + rng.uniform(-2, 2), "y": row * H + 0.3,
        "receiver_offset_db": round(rng.uniform(-3, 3), 1),
    })


def spot(cell):
    col, row = cell
    return [round(col * W + rng.uniform(1, W - 1), 2), round(row * H + rng.uniform(1, H - 1), 2)]


def door(a, b):
    (ca, ra), (cb, rb) = a, b
    if ra == rb:
        return [max(ca, cb) * W, ra * H + H / 2]
    return [ca * W + W / 2, max(ra, rb) * H]


people = []
keys = sorted(cells)
for index in range(beacons):
    cell = keys[rng.randrange(len(keys))]
    here = spot(cell)
    path = [{"t": 0, "x": here[0], "y": here[1]}]
    if index % 10 == 9:
        t = rng.uniform(20, 60)
        while t + 8 < duration:
            col, row = cell
            neighbours = [c for c in [(col - 1, row), (col + 1, row), (col, row - 1), (col, row + 1)] if c in cells]
            if not neighbours:
                break
            nxt = neighbours[rng.randrange(len(neighbours))]
            d, there = door(cell, nxt), spot(nxt)
            path += [{"t": round(t, 2), "x": here[0], "y": here[1]}, {"t": round(t + 4, 2), "x": d[0], "y": d[1]},
                     {"t": round(t + 8, 2), "x": there[0], "y": there[1]}]
            cell, here, t = nxt, there, t + 8 + rng.uniform(40, 70)
    path.append({"t": duration, "x": here[0], "y": here[1]})
    people.append({
        "name": "b%04d" % index,
        "identifiers": ["e2c56db5-dffb-48d2-b060-d0f5a71096e0", str(1 + index // 1000), str(1 + index % 1000)],
        "rate_hz": 1, "path": path,
    })
json.dump({
    "kind": "rooms", "name": "rooms-scale-%dx%d" % (gateways, beacons), "seed": 46, "duration_s": duration,
    "rooms": rooms, "walls": walls, "gateways": gateway_list, "people": people,
}, sys.stdout)
