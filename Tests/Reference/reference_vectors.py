"""Cross-check vectors for BeaconBridge's sensor decoders, decoded by the reference decoders Home Assistant uses.

Run by scripts/reference-check.sh inside the pinned virtual environment (requirements.txt). Writes one JSON file:
{"vectors": [{"id", "source", "format", "address", "ad" (hex AD bytes as received), "key" (hex bind key or null),
"sequence" (frames of one sequence are fed in order to one device), "expect": {KEY: VALUE}, "compare_model"}]}
where KEY is "sensor:<ha key>" -> [value, unit], "binary:<ha key>" -> bool, "event:<ha key>" -> [type, properties],
"model" -> string. An empty "expect" means the reference produced no reading: the frame is rejected.

Frames: the reference suites' published test frames (published-frames.json) and frames generated from a fixed
seed (a few thousand), plus BTHome encryption sequences (right key, wrong key, replayed counter, downgrade).
"""

import contextlib
import io
import json
import logging
import random
import sys
import time
from datetime import datetime

from bthome_ble import BTHomeBluetoothDeviceData
from bthome_ble.bthome_v2_encryption import encrypt_payload
from bthome_ble.const import MEAS_TYPES
from govee_ble import GoveeBluetoothDeviceData
from habluetooth import BluetoothServiceInfoBleak
from ruuvitag_ble import RuuvitagBluetoothDeviceData

BTHOME_UUID = "0000fcd2-0000-1000-8000-00805f9b34fb"
NOW = 1_700_000_000.0


def service_info(address, name, manufacturer_data=None, service_data=None, uuids=None, when=NOW):
    return BluetoothServiceInfoBleak(
        name=name, address=address, rssi=-60, manufacturer_data=manufacturer_data or {},
        service_data=service_data or {}, service_uuids=uuids or [], source="", device=None,
        advertisement=None, connectable=False, time=when, tx_power=None)


def ad_bytes(name, manufacturer_data=None, service_data=None):
    """The AD structures a scanner would have received (name, manufacturer data, BTHome service data)."""
    out = bytearray()
    if name:
        raw = name.encode()
        out += bytes([len(raw) + 1, 0x09]) + raw
    for company, data in (manufacturer_data or {}).items():
        out += bytes([len(data) + 3, 0xFF, company & 0xFF, company >> 8]) + data
    for uuid, data in (service_data or {}).items():
        assert uuid == BTHOME_UUID
        out += bytes([len(data) + 3, 0x16, 0xD2, 0xFC]) + data
    return out.hex()


def plain(value):
    if isinstance(value, datetime):
        return int(value.timestamp())
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return value
    return str(value)


def expectation(update):
    expect = {}
    for key, value in update.entity_values.items():
        if value.native_value is None or key.key == "signal_strength":  # the RSSI, not a reading of the frame
            continue
        description = update.entity_descriptions.get(key)
        unit = description.native_unit_of_measurement if description else None
        if value.native_value == "error":  # govee-ble: the device flagged its reading
            expect["binary:sensor_error"] = True
            continue
        expect["sensor:" + key.key] = [plain(value.native_value), None if unit is None else str(unit)]
    for key, value in update.binary_entity_values.items():
        if value.native_value is not None:
            expect["binary:" + key.key] = bool(value.native_value)
    for key, event in update.events.items():
        expect["event:" + key.key] = [event.event_type, {k: plain(v) for k, v in (event.event_properties or {}).items()}]
    return expect


def decode(fmt, info, device=None):
    if device is None:
        device = {"bthome": BTHomeBluetoothDeviceData, "ruuvi": RuuvitagBluetoothDeviceData,
                  "govee": GoveeBluetoothDeviceData}[fmt]()
    # A device object kept across a sequence accumulates its "updates" dictionaries; start each frame afresh so
    # the expectation is this frame's readings only (the replay and downgrade state lives elsewhere).
    for name in ("_sensor_values_updates", "_sensor_descriptions_updates", "_binary_sensor_values_updates",
                 "_binary_sensor_descriptions_updates"):
        getattr(device, name, {}).clear()
    try:
        update = device.update(info)
    except Exception:  # noqa: BLE001 - a frame the reference cannot read is a rejected frame
        return {}, None
    model = None
    if update.devices and None in update.devices:
        model = update.devices[None].model
    expect = expectation(update)
    if fmt == "govee" and expect and model:
        expect["model"] = model
    return expect, model


vectors = []


def add(source, fmt, address, name, manufacturer_data=None, service_data=None, key=None, sequence=None,
        device=None, compare_model=True, when=NOW):
    info = service_info(address, name, manufacturer_data, service_data, when=when)
    expect, _ = decode(fmt, info, device)
    if not compare_model:
        expect.pop("model", None)
    vectors.append({"id": len(vectors), "source": source, "format": fmt, "address": address,
                    "ad": ad_bytes(name, manufacturer_data, service_data), "key": key, "sequence": sequence,
                    "expect": expect})


def published(path):
    for frame in json.load(open(path))["frames"]:
        fmt = frame["format"]
        if fmt == "bthome":
            key = frame.get("key")
            device = BTHomeBluetoothDeviceData(bindkey=bytes.fromhex(key)) if key else None
            add(frame["test"], fmt, frame["address"], frame.get("name") or "",
                service_data={BTHOME_UUID: bytes.fromhex(frame["service_data"])}, key=key, device=device)
        else:
            data = {int(k): bytes.fromhex(v) for k, v in frame["manufacturer_data"].items()}
            company = 0x0499 if fmt == "ruuvi" else 0xEC88
            if company not in data:
                continue  # Govee models told apart by their name or other company ids: not decoded here
            add(frame["test"], fmt, frame["address"], frame.get("name") or "", manufacturer_data={company: data[company]},
                compare_model=False)


rng = random.Random(14)


def random_address():
    return ":".join(f"{rng.randrange(256):02X}" for _ in range(6))


def ruuvi_frames(count):
    sentinels = {1: b"\x80\x00", 3: b"\xff\xff", 5: b"\xff\xff", 7: b"\x80\x00", 9: b"\x80\x00", 11: b"\x80\x00",
                 13: b"\xff\xff", 15: b"\xff", 16: b"\xff\xff", 18: b"\xff" * 6}
    for index in range(count):
        kind = rng.random()
        if kind < 0.55:
            body = bytearray([5]) + bytearray(rng.randrange(256) for _ in range(23))
            for offset, value in sentinels.items():
                if rng.random() < 0.12:
                    body[offset:offset + len(value)] = value
        elif kind < 0.85:
            body = bytearray([3]) + bytearray(rng.randrange(256) for _ in range(13))
            if rng.random() < 0.5:
                body[1] = rng.randrange(201)
                body[3] = rng.randrange(100)
        else:  # wrong lengths and other data formats (6 and 0xE1 are out of scope and not generated)
            fmt = rng.choice([3, 5, 2, 4, 7, 0x10])
            length = rng.choice([1, 2, 13, 15, 23, 25, 30]) if fmt in (3, 5) else rng.randrange(1, 30)
            body = bytearray([fmt]) + bytearray(rng.randrange(256) for _ in range(length - 1))
        add(f"generated ruuvi {index}", "ruuvi", random_address(), "", manufacturer_data={0x0499: bytes(body)})


def govee_frames(count):
    for index in range(count):
        kind = rng.random()
        if kind < 0.5:
            temperature = rng.randrange(-450, 1050)  # 0.1 °C, some out of range
            humidity = rng.randrange(1000)
            value = abs(temperature) * 1000 + humidity
            if temperature < 0:
                value |= 0x800000
            battery = rng.randrange(101) | (0x80 if rng.random() < 0.1 else 0)
            if rng.random() < 0.2:
                value, battery = rng.randrange(1 << 24), rng.randrange(256)
            body = bytes([0]) + value.to_bytes(3, "big") + bytes([battery, 0])
        elif kind < 0.8:
            body = bytes([0]) + rng.randrange(-4000, 10000).to_bytes(2, "little", signed=True) \
                + rng.randrange(10001).to_bytes(2, "little") + bytes([rng.randrange(101), rng.randrange(256)])
            if rng.random() < 0.4:
                body += bytes([rng.randrange(256), rng.randrange(256)])  # the 9-byte layout
        else:
            length = rng.choice([1, 2, 3, 4, 5, 8, 10, 11, 12, 16, 20])
            body = bytes(rng.randrange(256) for _ in range(length))
        add(f"generated govee {index}", "govee", random_address(), "", manufacturer_data={0xEC88: body})


# Objects of the same Home Assistant key but different descriptions overwrite each other in bthome-ble (mass in kg
# and lb, distance in mm and m, volume in L and mL): never generated together.
EXCLUSIVE = [{0x06, 0x07}, {0x40, 0x41}, {0x47, 0x48}, {0x48, 0x4E}]


def bthome_object(obj_id):
    meas = MEAS_TYPES[obj_id]
    if meas.data_format in ("string", "raw"):
        length = rng.randrange(0, 8)
        if meas.data_format == "string" and rng.random() < 0.7:
            text = "".join(rng.choice("abcxyz019 ñ°€") for _ in range(length))
            raw = text.encode()[:40]
        else:
            raw = bytes(rng.randrange(256) for _ in range(length))
        return bytes([obj_id, len(raw)]) + raw
    if meas.data_format == "command":
        args = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3)))
        return bytes([obj_id, len(args), rng.randrange(7)]) + args
    length = meas.data_length
    if obj_id == 0x3A:
        return bytes([obj_id, rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 0x80, 0x81, 0x90])])
    if obj_id == 0x3C:
        return bytes([obj_id, rng.choice([0, 1, 2, 3]), rng.randrange(256)])
    return bytes([obj_id]) + bytes(rng.randrange(256) for _ in range(length))


def bthome_payload():
    ids = sorted(rng.sample(sorted(MEAS_TYPES), rng.randrange(1, 6)))
    chosen = []
    for obj_id in ids:
        if any(obj_id in group and any(other in group for other in chosen) for group in EXCLUSIVE):
            continue
        chosen.append(obj_id)
        if rng.random() < 0.08:
            chosen.append(obj_id)  # repeated objects are numbered _1, _2
    payload = b"".join(bthome_object(obj_id) for obj_id in chosen)
    tail = rng.random()
    if tail < 0.1:
        payload += bytes([rng.choice([0x30, 0x39, 0x66, 0x99, 0xEF])]) + bytes(rng.randrange(256) for _ in range(3))
    elif tail < 0.15 and len(payload) > 1:
        payload = payload[:-1]  # truncated last object
    return payload


def bthome_frames(count):
    for index in range(count):
        info = rng.choice([0x40, 0x40, 0x40, 0x44, 0x42, 0x46, 0x20, 0x60, 0x41])
        address = random_address()
        body = bytearray([info])
        if info & 0x02:
            body += bytes(reversed(bytes.fromhex(random_address().replace(":", ""))))
        body += bthome_payload() if info & 0x01 == 0 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 16)))
        add(f"generated bthome {index}", "bthome", address, "", service_data={BTHOME_UUID: bytes(body)})


def bthome_sequences():
    """Encrypted frames fed in order to one device with a bind key: right key, replayed counter, wrong key,
    a counter restart (below 100, as after a battery change) and the next counter, downgrade (bthome-ble's
    downgrade flag is sticky, so the downgrade comes last)."""
    key = bytes.fromhex("231d39c1d7cc1ab1aee224cd096db932")
    wrong = bytes.fromhex("814aac74c4f17b6c1581e1ab87816b99")
    for run in range(40):
        address = random_address()
        mac = bytes.fromhex(address.replace(":", ""))
        device = BTHomeBluetoothDeviceData(bindkey=key)
        sequence = f"bthome-encryption-{run}"
        counters = [300 + run, 301 + run, 150, 302 + run, 302 + run, run % 50, run % 50 + 1]
        for step, counter in enumerate(counters):
            data = bthome_payload()
            if len(data) < 2:
                data = bytes([0x02, 0xC4, 0x09])
            use = wrong if step == 3 else key
            with contextlib.redirect_stdout(io.StringIO()):
                encrypted = encrypt_payload(data=data, mac=mac, uuid16=b"\xd2\xfc", sw_version=b"\x41",
                                                count_id=counter.to_bytes(4, "little"), key=use)
            add(f"{sequence} step {step} counter {counter}{' wrong key' if use is wrong else ''}", "bthome", address, "",
                service_data={BTHOME_UUID: encrypted[2:]}, key=key.hex(), sequence=sequence, device=device,
                when=NOW + step * 10)
        add(f"{sequence} downgrade", "bthome", address, "", service_data={BTHOME_UUID: bytes([0x40, 0x02, 0xC4, 0x09])},
            key=key.hex(), sequence=sequence, device=device, when=NOW + 10 * len(counters))
    # A device without a key sending encrypted frames, and a device given the wrong key.
    for run in range(10):
        address = random_address()
        mac = bytes.fromhex(address.replace(":", ""))
        with contextlib.redirect_stdout(io.StringIO()):
            encrypted = encrypt_payload(data=bytes([0x02, 0xC4, 0x09]), mac=mac, uuid16=b"\xd2\xfc", sw_version=b"\x41",
                                        count_id=(500 + run).to_bytes(4, "little"), key=key)
        add(f"bthome wrong key {run}", "bthome", address, "", service_data={BTHOME_UUID: encrypted[2:]}, key=wrong.hex(),
            sequence=f"bthome-wrong-key-{run}", device=BTHomeBluetoothDeviceData(bindkey=wrong))


def main():
    logging.disable(logging.CRITICAL)
    published_path, out_path = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    published(published_path)
    ruuvi_frames(1000)
    govee_frames(1000)
    bthome_frames(2000)
    bthome_sequences()
    with open(out_path, "w") as out:
        json.dump({"vectors": vectors}, out)
    rejected = sum(1 for vector in vectors if not vector["expect"])
    print(f"reference vectors: {len(vectors)} ({rejected} rejected by the references) in "
          f"{time.monotonic() - started:.1f} s -> {out_path}")


if __name__ == "__main__":
    main()
