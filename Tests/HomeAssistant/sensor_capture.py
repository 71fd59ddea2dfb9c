"""A btsnoop capture of sensor advertisements for the HA stage's garden gateway, written here from the formats'
published byte layouts (not by BeaconBridge's own encoder): a Ruuvi tag (RAWv2, the example frame of Ruuvi's
data format 5 specification), a Govee H5075 (manufacturer data 0xEC88) and a plain BTHome v2 sensor (service
data 0xFCD2). SENSORS lists each one's readings as Home Assistant must show them.
"""

import struct

# btsnoop: microseconds since 0000-01-01 at the Unix epoch; datalink 1002 = HCI UART (H4).
EPOCH_OFFSET_US = 0x00DCDDB30F2F8000
H4_DATALINK = 1002


def _ad(ad_type, payload):
    return bytes([len(payload) + 1, ad_type]) + payload


FLAGS = _ad(0x01, b"\x06")
RUUVI_ADDRESS = "CB:B8:33:4C:88:4F"
GOVEE_ADDRESS = "A4:C1:38:11:22:33"
BTHOME_ADDRESS = "54:48:E6:11:22:33"
BUTTON_ADDRESS = "54:48:E6:11:22:44"
# The button: one frame a second (packet id, battery 100 %); a press at 20 s and a double press at 40 s, each
# sent three times (the same packet id), as BTHome buttons repeat an advertisement.
BUTTON_EVENTS = {20: ("01", "press"), 40: ("02", "double_press")}


def button_frames(step):
    """The button's frames in second `step`: (offset in s, AD bytes)."""
    presses = sum(1 for at in BUTTON_EVENTS if at <= step)
    objects = "00" + f"{presses + 1:02x}" + "0164"
    if step in BUTTON_EVENTS:
        frame = FLAGS + _ad(0x16, bytes.fromhex("D2FC40" + objects + "3A" + BUTTON_EVENTS[step][0]))
        return [(0.3, frame), (0.33, frame), (0.36, frame)]
    return [(0.3, FLAGS + _ad(0x16, bytes.fromhex("D2FC40" + objects)))]

FRAMES = {
    # Manufacturer 0x0499, format 5: 24.3 °C, 53.49 %, 100044 Pa, acceleration (4, -4, 1036) mG, battery
    # 2977 mV, tx power 4 dBm, movement counter 66, sequence 205, MAC CB:B8:33:4C:88:4F.
    RUUVI_ADDRESS: FLAGS + _ad(0xFF, bytes.fromhex("9904" "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F")),
    # Manufacturer 0xEC88, H5075: 00, 24-bit value 217502 (21.7 °C, 50.2 %), battery 100 %, 00.
    GOVEE_ADDRESS: FLAGS + _ad(0xFF, bytes.fromhex("88EC" "00" "03519E" "64" "00")),
    # Service data 0xFCD2, device information 0x40 (v2, plain), then objects in ascending id order:
    # battery 97 %, temperature 25.06 °C, humidity 50.55 %, pressure 1008.83 hPa, voltage 3.074 V,
    # motion on, window closed.
    BTHOME_ADDRESS: FLAGS + _ad(0x16, bytes.fromhex("D2FC" "40" "0161" "02CA09" "03BF13" "04138A01" "0C020C"
                                                     "2101" "2D00")),
}

# (beacon id, field, component, device_class, unit, state_class, state) as Home Assistant must show them.
SENSORS = [
    (f"ruuvi:{RUUVI_ADDRESS}", "temperature_c", "sensor", "temperature", "°C", "measurement", 24.3),
    (f"ruuvi:{RUUVI_ADDRESS}", "humidity_pct", "sensor", "humidity", "%", "measurement", 53.49),
    (f"ruuvi:{RUUVI_ADDRESS}", "pressure_hpa", "sensor", "pressure", "hPa", "measurement", 1000.44),
    (f"ruuvi:{RUUVI_ADDRESS}", "battery_mv", "sensor", "voltage", "mV", "measurement", 2977),
    (f"govee:{GOVEE_ADDRESS}", "temperature_c", "sensor", "temperature", "°C", "measurement", 21.7),
    (f"govee:{GOVEE_ADDRESS}", "humidity_pct", "sensor", "humidity", "%", "measurement", 50.2),
    (f"govee:{GOVEE_ADDRESS}", "battery_pct", "sensor", "battery", "%", "measurement", 100),
    (f"bthome:{BTHOME_ADDRESS}", "battery_pct", "sensor", "battery", "%", "measurement", 97),
    (f"bthome:{BTHOME_ADDRESS}", "temperature_c", "sensor", "temperature", "°C", "measurement", 25.06),
    (f"bthome:{BTHOME_ADDRESS}", "humidity_pct", "sensor", "humidity", "%", "measurement", 50.55),
    (f"bthome:{BTHOME_ADDRESS}", "pressure_hpa", "sensor", "pressure", "hPa", "measurement", 1008.83),
    (f"bthome:{BTHOME_ADDRESS}", "voltage_v", "sensor", "voltage", "V", "measurement", 3.074),
    (f"bthome:{BTHOME_ADDRESS}", "motion", "binary_sensor", "motion", None, None, "on"),
    (f"bthome:{BTHOME_ADDRESS}", "window", "binary_sensor", "window", None, None, "off"),
    (f"bthome:{BUTTON_ADDRESS}", "battery_pct", "sensor", "battery", "%", "measurement", 100),
]
# Readings a device does not send: no entity may exist for them.
ABSENT = [(f"govee:{GOVEE_ADDRESS}", "pressure_hpa"), (f"bthome:{BTHOME_ADDRESS}", "illuminance_lx"),
          (f"bthome:{BTHOME_ADDRESS}", "door"), (f"ruuvi:{RUUVI_ADDRESS}", "sequence")]


def _report_event(address, data, rssi):
    """An HCI LE Advertising Report event (0x3E, subevent 0x02) with one ADV_IND report."""
    addr = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
    params = bytes([0x02, 0x01, 0x00, 0x00]) + addr + bytes([len(data)]) + data + struct.pack("b", rssi)
    return bytes([0x3E, len(params)]) + params


def write(path, start, duration_s, interval_s=1.0):
    """Every sensor once per `interval_s` (staggered) for `duration_s` seconds from Unix time `start`."""
    out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, H4_DATALINK))
    count = 0
    steps = int(duration_s / interval_s)
    for step in range(steps):
        frames = [(index * 0.1, address, data) for index, (address, data) in enumerate(FRAMES.items())]
        frames += [(offset, BUTTON_ADDRESS, data) for offset, data in button_frames(step)]
        for index, (offset, address, data) in enumerate(frames):
            t = start + step * interval_s + offset
            packet = b"\x04" + _report_event(address, data, -60 - 3 * index)
            micros = int(round(t * 1_000_000)) + EPOCH_OFFSET_US
            out += struct.pack(">IIIIQ", len(packet), len(packet), 0x3, 0, micros) + packet
            count += 1
    with open(path, "wb") as f:
        f.write(out)
    return count
