"""The ESPHome stage of `make test` (scripts/esphome-stage.sh): the built gateway as an ESPHome Bluetooth proxy,
driven by the pinned aioesphomeapi (the client Home Assistant uses) and by raw sockets for what a well-behaved
client never sends. Each check prints PASS/FAIL; the exit status is the number of failures.

    python esphome_stage.py BEACONBRIDGE_BINARY WORK_DIR FIXTURE_CAPTURE
"""
import asyncio
import base64
import os
import re
import socket
import struct
import subprocess
import sys
import time

from aioesphomeapi import APIClient
from aioesphomeapi.core import (APIConnectionError, InvalidAuthAPIError, InvalidEncryptionKeyAPIError,
                                RequiresEncryptionAPIError)

BIN, WORK, FIXTURE = sys.argv[1], sys.argv[2], sys.argv[3]
FAILURES = []


def check(name, ok, detail=""):
    print(("PASS" if ok else "FAIL") + f": {name}" + (f" ({detail})" if detail else ""), flush=True)
    if not ok:
        FAILURES.append(name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expected_advertisements(path):
    """Every LE (extended) advertising report of a btsnoop capture, read here independently of the gateway:
    (address as 48-bit integer MSB first, address type, RSSI with 127 as -127, data)."""
    out = []
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"btsnoop\0", "not a btsnoop file"
    datalink = struct.unpack(">I", blob[12:16])[0]
    pos = 16
    while pos + 24 <= len(blob):
        _orig, incl, flags, _drops, _ts = struct.unpack(">IIIIq", blob[pos:pos + 24])
        data = blob[pos + 24:pos + 24 + incl]
        pos += 24 + incl
        if datalink == 1002:
            if not data or data[0] != 0x04:
                continue
            event = data[1:]
        else:
            continue
        if len(event) < 4 or event[0] != 0x3E:
            continue
        sub, body = event[2], event[3:]
        if sub == 0x02:
            n, i = body[0], 1
            for _ in range(n):
                addr_type = body[i + 1]
                addr = int.from_bytes(body[i + 2:i + 8], "little")
                length = body[i + 8]
                adv = bytes(body[i + 9:i + 9 + length])
                rssi = struct.unpack("b", body[i + 9 + length:i + 10 + length])[0]
                i += 10 + length
                out.append((addr, addr_type, -127 if rssi == 127 else rssi, adv))
        elif sub == 0x0D:
            n, i = body[0], 1
            for _ in range(n):
                addr_type = body[i + 2]
                addr = int.from_bytes(body[i + 3:i + 9], "little")
                rssi = struct.unpack("b", body[i + 13:i + 14])[0]
                length = body[i + 23]
                adv = bytes(body[i + 24:i + 24 + length])
                i += 24 + length
                out.append((addr, addr_type, -127 if rssi == 127 else rssi, adv))
    return out


def write_repeated_capture(source, path, copies, spacing_us):
    """A btsnoop capture of the advertising report events of `source`, repeated `copies` times, one event every
    `spacing_us` microseconds of capture time (real radio bytes, more of them)."""
    with open(source, "rb") as f:
        blob = f.read()
    header, pos, events, start = blob[:16], 16, [], None
    while pos + 24 <= len(blob):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", blob[pos:pos + 24])
        data = blob[pos + 24:pos + 24 + incl]
        pos += 24 + incl
        if len(data) > 3 and data[0] == 0x04 and data[1] == 0x3E and data[3] in (0x02, 0x0D):
            events.append((orig, flags, data))
            start = ts if start is None else start
    count = 0
    with open(path, "wb") as out:
        out.write(header)
        for _ in range(copies):
            for orig, flags, data in events:
                out.write(struct.pack(">IIIIq", orig, len(data), flags, 0, start + count * spacing_us) + data)
                count += 1
    return count


class Broker:
    def __init__(self):
        self.port = free_port()
        conf = os.path.join(WORK, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.proc = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def subscriber(self, path):
        return subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port), "-t", "beaconbridge/#",
                                 "-v"], stdout=open(path, "w"), stderr=subprocess.DEVNULL)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def write_config(name, broker, port, extra, telemetry_interval=None):
    path = os.path.join(WORK, f"{name}.yaml")
    telemetry = f"interval_s: {telemetry_interval}" if telemetry_interval else "enabled: false"
    with open(path, "w") as f:
        f.write(f"""gateway:
  id: stage-{name}
  name: Stage {name}
mqtt:
  host: 127.0.0.1
  port: {broker.port}
outbox:
  path: {WORK}/{name}-outbox.sqlite
telemetry:
  {telemetry}
""")
        if extra is not None:
            f.write(f"""esphome_api:
  enabled: true
  bind: 127.0.0.1
  port: {port}
  name: stage-{name}
  mdns: false
""" + "".join(f"  {line}\n" for line in extra))
    return path


class Gateway:
    def __init__(self, name, config, capture, env=None, speed=None):
        self.log_path = os.path.join(WORK, f"{name}.log")
        self.started = time.time()
        speed_args = ["--speed", str(speed)] if speed else []
        self.proc = subprocess.Popen([BIN, "replay", capture, "--config", config] + speed_args, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log_path, "w"), env={**os.environ, **(env or {})})

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def wait(self, timeout=120):
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = None
        self.seconds = time.time() - self.started
        return code

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.wait(30)


def wait_listening(port, gateway, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if f"port={port}" in gateway.log():
            return True
        if gateway.proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


async def receive_all(port, expected_count, psk=None, password=None, info_out=None, name="client"):
    """Connects with aioesphomeapi, reads device info, subscribes to raw advertisements and collects them
    until `expected_count` arrived or the gateway disconnects (60 s at most)."""
    client = APIClient("127.0.0.1", port, password, noise_psk=psk, client_info=f"esphome-stage {name}")
    await client.connect(login=True)
    info = await client.device_info()
    if info_out is not None:
        info_out.append(info)
        info_out.append(await client.list_entities_services())
    got = []
    client.subscribe_bluetooth_le_raw_advertisements(lambda msg: got.extend(
        (a.address, a.address_type, a.rssi, bytes(a.data)) for a in msg.advertisements))
    deadline = time.time() + 60
    while len(got) < expected_count and time.time() < deadline:
        await asyncio.sleep(0.05)
    try:
        await client.disconnect()
    except Exception:
        pass
    return got


def wait_for_log(gateway, text, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if text in gateway.log():
            return True
        time.sleep(0.05)
    return text in gateway.log()


def raw_connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def plaintext_frame(msg_type, body=b""):
    def varint(v):
        out = b""
        while v >= 0x80:
            out += bytes([(v & 0x7F) | 0x80])
            v >>= 7
        return out + bytes([v])
    return b"\x00" + varint(len(body)) + varint(msg_type) + body


def closed_by_server(sock, payload, timeout=10):
    """Sends `payload` and reads until the server closes (True) or `timeout` passes (False)."""
    sock.sendall(payload)
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    finally:
        sock.close()


def same_multiset(got, want):
    from collections import Counter
    g, w = Counter(got), Counter(want)
    return g == w, f"received {len(got)}, expected {len(want)}, missing {sum((w - g).values())}, extra {sum((g - w).values())}"


async def stage_plaintext(broker, fixture_ads):
    port = free_port()
    config = write_config("plain", broker, port, ["replay_wait_for_clients: 2"])
    sub = broker.subscriber(os.path.join(WORK, "plain-mqtt.txt"))
    gw = Gateway("plain", config, FIXTURE)
    check("plaintext: gateway listens", wait_listening(port, gw))

    # Malformed, oversized and out-of-order frames: each closes that connection, the gateway goes on.
    check("malformed: wrong indicator byte closes the connection", closed_by_server(raw_connect(port), b"\x05\x01\x02"))
    check("malformed: oversized frame closes the connection",
          closed_by_server(raw_connect(port), b"\x00\xff\xff\xff\x0f\x01"))
    check("malformed: subscribe before Hello closes the connection",
          closed_by_server(raw_connect(port), plaintext_frame(66, b"\x08\x01")))
    check("malformed: truncated protobuf body closes the connection",
          closed_by_server(raw_connect(port), plaintext_frame(1, b"\x0a\x40abc")))
    try:
        await asyncio.wait_for(APIClient("127.0.0.1", port, None, noise_psk=base64.b64encode(b"k" * 32).decode())
                               .connect(login=True), 20)
        check("malformed: an encrypting client on a plaintext server fails", False)
    except Exception as error:  # aioesphomeapi reports the dropped handshake
        check("malformed: an encrypting client on a plaintext server fails", True, type(error).__name__)

    info = []
    first, second = await asyncio.gather(receive_all(port, len(fixture_ads), info_out=info, name="one"),
                                         receive_all(port, len(fixture_ads), name="two"))
    code = gw.wait()
    sub.terminate()
    device, (entities, services) = info[0], info[1]
    check("plaintext: device info name", device.name == "stage-plain", device.name)
    check("plaintext: device info MAC and bluetooth_mac_address",
          re.fullmatch(r"[0-9A-F]{2}(:[0-9A-F]{2}){5}", device.mac_address) is not None
          and device.bluetooth_mac_address == device.mac_address, f"{device.mac_address} / {device.bluetooth_mac_address}")
    check("plaintext: proxy flags passive scan + raw advertisements (33)", device.bluetooth_proxy_feature_flags == 33,
          str(device.bluetooth_proxy_feature_flags))
    check("plaintext: model and version", device.model == "BeaconBridge" and device.esphome_version != "",
          f"{device.model} {device.esphome_version}")
    check("plaintext: no entities, no services", entities == [] and services == [])
    ok, detail = same_multiset(first, fixture_ads)
    check("plaintext: first client got every advertisement (address, type, RSSI, bytes)", ok, detail)
    ok, detail = same_multiset(second, fixture_ads)
    check("plaintext: second client at the same time got every advertisement", ok, detail)
    check("plaintext: gateway exited 0", code == 0, str(code))
    log = gw.log()
    for reason in ["malformed frame: indicator 0x05", "oversized frame", "out of order: message type 66 before Hello",
                   "malformed message"]:
        check(f"malformed: logged reason `{reason}`", reason in log)
    with open(os.path.join(WORK, "plain-mqtt.txt")) as f:
        mqtt_lines = len(f.readlines())
    check("plaintext: MQTT events published beside the proxy", mqtt_lines > 0, f"{mqtt_lines} messages")


async def stage_encrypted(broker, fixture_ads):
    port = free_port()
    key = base64.b64encode(os.urandom(32)).decode()
    key_file = os.path.join(WORK, "esphome.key")
    with open(key_file, "w") as f:
        f.write(key + "\n")
    config = write_config("noise", broker, port, [f"encryption_key_file: {key_file}", "password_env: STAGE_API_PASSWORD",
                                                  "replay_wait_for_clients: 1"])
    gw = Gateway("noise", config, FIXTURE, env={"STAGE_API_PASSWORD": "open sesame"})
    check("encrypted: gateway listens", wait_listening(port, gw))
    wrong = base64.b64encode(os.urandom(32)).decode()
    try:
        await asyncio.wait_for(APIClient("127.0.0.1", port, None, noise_psk=wrong).connect(login=True), 20)
        check("encrypted: wrong key refused", False, "connected")
    except InvalidEncryptionKeyAPIError:
        check("encrypted: wrong key refused", True, "InvalidEncryptionKeyAPIError")
    except Exception as error:
        check("encrypted: wrong key refused", False, repr(error))
    try:
        await asyncio.wait_for(APIClient("127.0.0.1", port, None).connect(login=True), 20)
        check("encrypted: client without a key refused", False, "connected")
    except RequiresEncryptionAPIError:
        check("encrypted: client without a key refused", True, "RequiresEncryptionAPIError")
    except Exception as error:
        check("encrypted: client without a key refused", False, repr(error))
    try:
        client = APIClient("127.0.0.1", port, "wrong password", noise_psk=key)
        await asyncio.wait_for(client.connect(login=True), 20)
        await asyncio.wait_for(client.device_info(), 10)
        check("encrypted: wrong password refused", False, "device info answered")
    except InvalidAuthAPIError:
        check("encrypted: wrong password refused", True, "InvalidAuthAPIError")
    except APIConnectionError as error:
        # aioesphomeapi reports "Invalid password!" as the connection's fatal error; the call that follows
        # then fails as not connected. The gateway's log says why it closed.
        check("encrypted: wrong password refused", wait_for_log(gw, "reason=\"out of order: invalid password\""),
              type(error).__name__)
    info = []
    got = await receive_all(port, len(fixture_ads), psk=key, password="open sesame", info_out=info, name="noise")
    code = gw.wait()
    check("encrypted: device info says a password is used", info[0].uses_password is True)
    check("encrypted: proxy flags (33)", info[0].bluetooth_proxy_feature_flags == 33)
    ok, detail = same_multiset(got, fixture_ads)
    check("encrypted: client got every advertisement", ok, detail)
    check("encrypted: gateway exited 0", code == 0, str(code))
    log = gw.log()
    check("encrypted: wrong key logged", "Handshake MAC failure" in log)
    check("secrets: neither key nor password in the log", key not in log and "open sesame" not in log)


async def stage_slow_client(broker, big_capture):
    """A client that subscribes and never reads: its advertisements are dropped (counted), the other client
    and MQTT get everything, and the replay is not held up."""
    want = expected_advertisements(big_capture)
    # Baseline without the proxy: what MQTT gets and how long the replay takes.
    base_sub = broker.subscriber(os.path.join(WORK, "base-mqtt.txt"))
    base = Gateway("base", write_config("base", broker, 0, None), big_capture, speed=100)
    base_code = base.wait()
    time.sleep(0.5)
    base_sub.terminate()

    port = free_port()
    config = write_config("slow", broker, port, ["replay_wait_for_clients: 2", "client_queue_bytes: 16KiB"])
    sub = broker.subscriber(os.path.join(WORK, "slow-mqtt.txt"))
    gw = Gateway("slow", config, big_capture, speed=100)
    check("slow client: gateway listens", wait_listening(port, gw))
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(("127.0.0.1", port))
    stuck.sendall(plaintext_frame(1, b"\x0a\x05stuck") + plaintext_frame(3) + plaintext_frame(66, b"\x08\x01"))
    # ...and never reads again.
    got = await receive_all(port, len(want), name="reader")
    code = gw.wait()
    time.sleep(0.5)
    sub.terminate()
    stuck.close()
    ok, detail = same_multiset(got, want)
    check("slow client: the reading client got every advertisement", ok, detail)
    log = gw.log()
    stopped = re.search(r'logger=esphome msg=stopped .* dropped=(\d+)', log)
    dropped = int(stopped.group(1)) if stopped else 0
    check("slow client: its advertisements were dropped and counted", dropped > 0, f"dropped={dropped}")
    check("slow client: drop logged", "client too slow" in log)

    def summary(text):
        line = re.search(r'logger=beaconbridge msg=stopped (.*)', text)
        return dict(re.findall(r'(\w+)=(\d+)', line.group(1))) if line else {}
    base_summary, slow_summary = summary(base.log()), summary(log)
    check("slow client: MQTT delivered every event, as many as without the proxy",
          slow_summary.get("events") == base_summary.get("events") and int(slow_summary.get("events", 0)) > 0
          and slow_summary.get("published") == slow_summary.get("events") and slow_summary.get("dropped") == "0",
          f"with proxy {slow_summary}, without {base_summary}")
    check("slow client: gateway exited 0", code == 0 and base_code == 0, f"{code} {base_code}")
    def replay_seconds(text):
        stamps = [re.search(r'ts=\S+T(\d+):(\d+):([\d.]+)Z .*msg="' + what, text) for what in ("replaying capture", "capture replayed")]
        if not all(stamps):
            return float("nan")
        a, b = ((int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))) for m in stamps)
        return b - a
    print(f"info: replaying {len(want)} advertisements took {replay_seconds(log):.2f} s with a stuck and a reading client, "
          f"{replay_seconds(base.log()):.2f} s without the proxy (capture time 412 s at --speed 100); the stuck client "
          f"then delays the exit by at most the 2 s drain", flush=True)


def telemetry_counters(path, gateway):
    """The `counters` of every telemetry message of `gateway` in a `mosquitto_sub -v` output file, in order."""
    import json
    out = []
    with open(path) as f:
        for line in f:
            topic, _, payload = line.partition(" ")
            if topic == f"beaconbridge/{gateway}/telemetry":
                out.append(json.loads(payload)["counters"])
    return out


async def stage_telemetry(broker):
    """The proxy's counters in the telemetry the gateway publishes over MQTT: a client that subscribes and stops
    reading makes `esphome_queue_dropped` rise from one message to the next; a malformed frame counts in
    `esphome_closed_bad_frames`, a connection over `max_clients` in `esphome_refused`."""
    capture = os.path.join(WORK, "telemetry.btsnoop")
    count = write_repeated_capture(FIXTURE, capture, 40, 20_000)
    port = free_port()
    config = write_config("telemetry", broker, port, ["replay_wait_for_clients: 1", "client_queue_bytes: 16KiB",
                                                      "max_clients: 2"], telemetry_interval=5)
    mqtt_path = os.path.join(WORK, "telemetry-mqtt.txt")
    sub = broker.subscriber(mqtt_path)
    gw = Gateway("telemetry", config, capture, speed=20)
    check("telemetry: gateway listens", wait_listening(port, gw))
    check("telemetry: a malformed frame closes its connection", closed_by_server(raw_connect(port), b"\x05\x01\x02"))
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(("127.0.0.1", port))
    idle = raw_connect(port)
    idle.sendall(plaintext_frame(1, b"\x0a\x04idle"))
    check("telemetry: a connection over max_clients (2) is refused", closed_by_server(raw_connect(port), plaintext_frame(1)))
    # The stuck client subscribes (the replay starts then, `replay_wait_for_clients: 1`) and never reads again.
    stuck.sendall(plaintext_frame(1, b"\x0a\x05stuck") + plaintext_frame(3) + plaintext_frame(66, b"\x08\x01"))
    code = gw.wait(180)
    time.sleep(0.5)
    sub.terminate()
    stuck.close()
    idle.close()
    check("telemetry: gateway exited 0", code == 0, str(code))
    samples = telemetry_counters(mqtt_path, "stage-telemetry")
    drops = [c.get("esphome_queue_dropped") for c in samples]
    print(f"info: {count} events replayed in {gw.seconds:.1f} s; esphome_queue_dropped in the {len(samples)} "
          f"telemetry messages: {drops}", flush=True)
    check("telemetry: the proxy's counters are in every telemetry message",
          len(samples) >= 2 and all(all(k in c for k in ("esphome_clients", "esphome_connections", "esphome_refused",
                                                         "esphome_closed_bad_frames", "esphome_advertisements",
                                                         "esphome_advertisements_sent", "esphome_queue_dropped",
                                                         "esphome_events_dropped")) for c in samples),
          f"{len(samples)} messages")
    rising = len(drops) >= 2 and None not in drops and all(a <= b for a, b in zip(drops, drops[1:])) \
        and drops[-1] > drops[0] and drops[-1] > 0
    check("telemetry: esphome_queue_dropped rises while the client does not read", rising, str(drops))
    stopped = re.search(r'logger=esphome msg=stopped .* dropped=(\d+)', gw.log())
    final = int(stopped.group(1)) if stopped else -1
    check("telemetry: the last figure is at most the total logged at stop", None not in drops and bool(drops)
          and drops[-1] <= final, f"telemetry {drops[-1:]} , log {final}")
    last = samples[-1] if samples else {}
    check("telemetry: esphome_refused counts the connection over max_clients", last.get("esphome_refused", 0) >= 1,
          str(last.get("esphome_refused")))
    check("telemetry: esphome_closed_bad_frames counts the malformed frame", last.get("esphome_closed_bad_frames", 0) >= 1,
          str(last.get("esphome_closed_bad_frames")))
    check("telemetry: esphome_clients shows the two connected clients", any(c.get("esphome_clients") == 2 for c in samples),
          str([c.get("esphome_clients") for c in samples]))
    check("telemetry: advertisements counted", last.get("esphome_advertisements", 0) > 0,
          str(last.get("esphome_advertisements")))


async def stage_allow_list(broker):
    port = free_port()
    config = write_config("allow", broker, port, ["allow: [10.0.0.0/8]", "replay_wait_for_clients: 1"])
    gw = Gateway("allow", config, FIXTURE)
    check("allow-list: gateway listens", wait_listening(port, gw))
    check("allow-list: a client outside the list is refused", closed_by_server(raw_connect(port), plaintext_frame(1)))
    check("allow-list: refusal logged", wait_for_log(gw, 'reason="address not in esphome_api.allow"'))
    gw.stop()


async def main():
    os.makedirs(WORK, exist_ok=True)
    broker = Broker()
    try:
        fixture_ads = expected_advertisements(FIXTURE)
        check("fixture: advertisements read from the capture", len(fixture_ads) > 100, str(len(fixture_ads)))
        await stage_plaintext(broker, fixture_ads)
        await stage_encrypted(broker, fixture_ads)
        await stage_allow_list(broker)
        big = os.path.join(WORK, "big.btsnoop")
        count = write_repeated_capture(FIXTURE, big, 50, 20_000)
        print(f"info: {count} advertising report events, one every 20 ms, replayed at --speed 100", flush=True)
        await stage_slow_client(broker, big)
        await stage_telemetry(broker)
    finally:
        broker.stop()
    print(f"esphome-stage: {len(FAILURES)} failure(s)" + (": " + ", ".join(FAILURES) if FAILURES else ""), flush=True)
    return len(FAILURES)


sys.exit(asyncio.run(main()))
