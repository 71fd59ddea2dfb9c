"""The other real parts of the HA stage: a private mosquitto on a free loopback port, a recording MQTT client,
and BeaconBridge gateways (the built binary replaying a capture), plus the check bookkeeping."""

import getpass
import json
import os
import pathlib
import signal
import socket
import subprocess
import threading
import time

import paho.mqtt.client as mqtt


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, timeout, interval=0.5):
    """Polls `predicate` until it returns something truthy (returned) or `timeout` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            print(f"  (gave up waiting for {what} after {timeout} s)", flush=True)
            return None
        time.sleep(interval)


class Checks:
    def __init__(self):
        self.passed, self.failed = [], []

    def check(self, name, condition, detail=""):
        if condition:
            self.passed.append(name)
            print(f"  ok    {name}", flush=True)
        else:
            self.failed.append(name)
            print(f"  FAIL  {name}" + (f": {detail}" if detail else ""), flush=True)
        return bool(condition)


class Broker:
    """mosquitto without persistence: a restart loses every retained message, like a replaced broker."""

    def __init__(self, directory, port, binary="/usr/sbin/mosquitto"):
        self.dir = pathlib.Path(directory)
        self.port = port
        self.binary = binary
        self.process = None
        self.runs = 0

    def start(self):
        self.runs += 1
        self.log_path = self.dir / f"mosquitto-{self.runs}.log"
        conf = self.dir / "mosquitto.conf"
        conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                        f"log_dest file {self.log_path}\nlog_type all\nconnection_messages true\n"
                        "log_timestamp true\n")
        conf.write_text(conf.read_text() + f"user {getpass.getuser()}\n")
        self.process = subprocess.Popen([self.binary, "-c", str(conf)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        if not wait_for("mosquitto", self.accepts, 20, 0.1):
            raise RuntimeError(f"mosquitto did not start on port {self.port}")

    def accepts(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log(self):
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.dir.glob("mosquitto-*.log")))


class Recorder:
    """Records every message on `#` (with its retain flag) and can publish; reconnects with the broker."""

    def __init__(self, port):
        self.messages = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(client_id=f"ha-stage-recorder-{os.getpid()}", clean_session=True)
        self.client.on_connect = lambda c, u, f, rc: c.subscribe("#", qos=1)
        self.client.on_message = self._message
        self.client.reconnect_delay_set(0.2, 1)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()

    def _message(self, client, userdata, message):
        with self.lock:
            self.messages.append((time.monotonic(), message.topic, message.payload.decode(errors="replace"),
                                  bool(message.retain)))

    def on(self, topic, since=0.0):
        with self.lock:
            return [(t, payload, retain) for t, top, payload, retain in self.messages if top == topic and t >= since]

    def last_json(self, topic):
        found = self.on(topic)
        return json.loads(found[-1][1]) if found else None

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


class Gateway:
    """`beaconbridge run` with a replay source: the daemon as deployed, fed a capture at real-time speed."""

    def __init__(self, binary, directory, name, yaml_text):
        self.binary = binary
        self.dir = pathlib.Path(directory)
        self.name = name
        self.config = self.dir / f"{name}.yaml"
        self.config.write_text(yaml_text)
        self.log_path = self.dir / f"{name}.log"
        self.process = None

    def check_config(self):
        result = subprocess.run([self.binary, "check-config", "--config", str(self.config)],
                                capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr

    def start(self):
        self.log = open(self.log_path, "a")
        self.process = subprocess.Popen([self.binary, "run", "--config", str(self.config)],
                                        stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def running(self):
        return self.process is not None and self.process.poll() is None

    def terminate(self, timeout=30):
        if self.running():
            self.process.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def wait(self, timeout):
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.log.close()
        return code

    def log_lines(self):
        return self.log_path.read_text(errors="replace").splitlines() if self.log_path.exists() else []


def retained(port, topic, timeout=5.0):
    """The retained message a new subscriber gets on `topic` (payload text), or None."""
    got = []
    client = mqtt.Client(client_id=f"ha-stage-probe-{os.getpid()}-{time.monotonic_ns()}", clean_session=True)
    client.on_connect = lambda c, u, f, rc: c.subscribe(topic, qos=1)
    client.on_message = lambda c, u, m: got.append(m.payload.decode(errors="replace")) if m.retain else None
    client.connect("127.0.0.1", port, keepalive=30)
    client.loop_start()
    wait_for(f"retained {topic}", lambda: got, timeout, 0.1)
    client.loop_stop()
    client.disconnect()
    return got[0] if got else None
