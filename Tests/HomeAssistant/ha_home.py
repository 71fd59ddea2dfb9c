"""A private Home Assistant Core for the HA stage: configuration directory, storage files, process, REST and
websocket access. Runs inside the stage's virtual environment (PyJWT and aiohttp come with Home Assistant).

The MQTT integration is configured as a config entry (.storage/core.config_entries), onboarding is marked done
(.storage/onboarding) and a long-lived access token is created through the auth storage (.storage/auth): a
refresh token of type long_lived_access_token whose jwt_key signs the access token, as Home Assistant's own
`async_create_refresh_token` + `async_create_access_token` would store and issue it.
"""

import asyncio
import datetime
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import aiohttp
import jwt

# The Core under test. The trixie run (scripts/ha-stage-trixie.sh) sets both: its Core runs chrooted in a Debian 13
# root with Python 3.13, while this driver, the broker and the gateways run on the host.
HA_VERSION = os.environ.get("HA_STAGE_HA_VERSION", "2024.3.3")
# The command that runs Home Assistant's Python (a JSON list); default: this driver's own interpreter.
HA_PYTHON = json.loads(os.environ.get("HA_STAGE_HA_PYTHON", "null")) or [sys.executable]
# The line the MQTT client logs at each connection to the broker (the checks count it). Core 2024.3 logs it at INFO;
# 2026.2 at DEBUG (mqtt/client.py `_async_mqtt_on_connect`), so from 2025 on the client's logger is set to DEBUG.
CONNECTED = "Connected to MQTT server"
MQTT_CLIENT_LOG = "info" if int(HA_VERSION.split(".")[0]) < 2025 else "debug"


def storage(key, data, version=1, minor_version=1):
    return {"version": version, "minor_version": minor_version, "key": key, "data": data}


class HomeAssistant:
    def __init__(self, directory, http_port, mqtt_port, extra_yaml=""):
        self.dir = pathlib.Path(directory)
        self.http_port = http_port
        self.mqtt_port = mqtt_port
        self.extra_yaml = extra_yaml
        self.process = None
        self.token = None
        self.starts = 0

    # -- configuration ------------------------------------------------------------------------------------
    def write_configuration(self):
        (self.dir / ".storage").mkdir(parents=True, exist_ok=True)
        (self.dir / "configuration.yaml").write_text(f"""\
homeassistant:
  name: BeaconBridge stage
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  unit_system: metric
  currency: EUR
  country: DE
  time_zone: UTC
  internal_url: http://127.0.0.1:{self.http_port}
http:
  server_host: 127.0.0.1
  server_port: {self.http_port}
api:
history:
recorder:
  db_url: sqlite:///{self.dir}/home-assistant_v2.db
  commit_interval: 1
logger:
  default: warning
  logs:
    homeassistant.components.mqtt: info
    homeassistant.components.mqtt.client: {MQTT_CLIENT_LOG}
    homeassistant.components.mqtt_room: debug
{self.extra_yaml}""")
        now = datetime.datetime.now(datetime.timezone.utc).isoformat()
        user_id = uuid.uuid4().hex
        token_id = uuid.uuid4().hex
        jwt_key = secrets.token_hex(64)
        auth = storage("auth", {
            "users": [{"id": user_id, "group_ids": ["system-admin"], "is_owner": True, "is_active": True,
                       "name": "stage", "system_generated": False, "local_only": False}],
            "groups": [{"id": "system-admin", "name": "Administrators"},
                       {"id": "system-users", "name": "Users"},
                       {"id": "system-read-only", "name": "Read Only"}],
            "credentials": [],
            "refresh_tokens": [{
                "id": token_id, "user_id": user_id, "client_id": None, "client_name": "beaconbridge-ha-stage",
                "client_icon": None, "token_type": "long_lived_access_token", "created_at": now,
                "access_token_expiration": 3650 * 86400.0, "token": secrets.token_hex(64), "jwt_key": jwt_key,
                "last_used_at": None, "last_used_ip": None, "credential_id": None, "version": HA_VERSION}],
        })
        self.write_storage("auth", auth)
        self.write_storage("onboarding", storage("onboarding", {
            "done": ["user", "core_config", "analytics", "integration"]}, version=4))
        self.write_storage("core.config_entries", storage("core.config_entries", {"entries": [{
            "entry_id": uuid.uuid4().hex, "version": 1, "minor_version": 1, "domain": "mqtt",
            "title": f"127.0.0.1:{self.mqtt_port}",
            "data": {"broker": "127.0.0.1", "port": self.mqtt_port, "discovery": True,
                     "discovery_prefix": "homeassistant"},
            "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False,
            "source": "user", "unique_id": None, "disabled_by": None}]}))
        issued = int(time.time()) - 60
        self.token = jwt.encode({"iss": token_id, "iat": issued, "exp": issued + 3650 * 86400},
                                jwt_key, algorithm="HS256")

    def write_storage(self, key, content):
        path = self.dir / ".storage" / key
        path.write_text(json.dumps(content, indent=2))
        os.chmod(path, 0o600)

    @property
    def log_path(self):
        return self.dir / "home-assistant.log"

    def run_logs(self):
        """The log of every run so far (call after `stop()`)."""
        return sorted(self.dir.glob("run-*.log"), key=lambda p: int(p.stem.split("-")[1]))

    # -- process --------------------------------------------------------------------------------------------
    def start(self):
        self.starts += 1
        self.console = open(self.dir / f"console-{self.starts}.txt", "w")
        self.process = subprocess.Popen(
            [*HA_PYTHON, "-m", "homeassistant", "--config", str(self.dir), "--skip-pip"],
            stdout=self.console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def stop(self, timeout=90):
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        self.console.close()
        # Home Assistant moves its log aside at the next start: keep each run's log for the log checks.
        if self.log_path.exists():
            shutil.copyfile(self.log_path, self.dir / f"run-{self.starts}.log")
        return code

    def alive(self):
        return self.process is not None and self.process.poll() is None

    # -- REST -----------------------------------------------------------------------------------------------
    def rest(self, path, method="GET", body=None, timeout=10):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.http_port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"null")

    def api_running(self):
        try:
            return self.rest("/api/").get("message") == "API running."
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError):
            return False

    def running(self):
        try:
            return self.rest("/api/config").get("state") == "RUNNING"
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError):
            return False

    def states(self):
        return {s["entity_id"]: s for s in self.rest("/api/states")}

    def state(self, entity_id):
        try:
            return self.rest(f"/api/states/{entity_id}")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def history(self, entity_ids, since):
        start = urllib.parse.quote(since.strftime("%Y-%m-%dT%H:%M:%S+00:00"))
        rows = self.rest(f"/api/history/period/{start}?filter_entity_id={','.join(entity_ids)}"
                         "&no_attributes")
        return {series[0]["entity_id"]: [s["state"] for s in series] for series in rows if series}

    def mqtt_entry_state(self):
        try:
            entries = self.rest("/api/config/config_entries/entry")
        except (urllib.error.URLError, OSError, ValueError):
            return None
        return next((e.get("state") for e in entries if e.get("domain") == "mqtt"), None)

    # -- websocket (registries) -----------------------------------------------------------------------------
    def ws(self, *commands):
        return asyncio.run(self._ws(commands))

    async def _ws(self, commands):
        results = []
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"http://127.0.0.1:{self.http_port}/api/websocket") as socket:
                await socket.receive_json()
                await socket.send_json({"type": "auth", "access_token": self.token})
                reply = await socket.receive_json()
                if reply.get("type") != "auth_ok":
                    raise RuntimeError(f"websocket auth failed: {reply}")
                for number, command in enumerate(commands, start=1):
                    await socket.send_json({"id": number, **command})
                    while True:
                        reply = await socket.receive_json()
                        if reply.get("id") == number and reply.get("type") == "result":
                            break
                    if not reply.get("success"):
                        raise RuntimeError(f"websocket {command}: {reply}")
                    results.append(reply["result"])
        return results

    def registries(self):
        entities, devices = self.ws({"type": "config/entity_registry/list"}, {"type": "config/device_registry/list"})
        return entities, devices
