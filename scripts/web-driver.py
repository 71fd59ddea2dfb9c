#!/usr/bin/env python3
"""The web stage's browser driver (scripts/web-stage.sh): drives a headless Chromium started with
--remote-debugging-port through the DevTools protocol, with Python's standard library only (a minimal WebSocket
client: RFC 6455 handshake, masked text frames out, unmasked frames in).

What it does, each step bounded in time:
  1. opens a new page target, sends the read token as the browser's Basic login on every request
     (Network.setExtraHTTPHeaders), sizes the viewport to a phone (412 px wide) and loads the status page;
  2. waits until the page lists beacons (the live part refreshes every few seconds);
  3. fills the "Train a room" form (action token, room, beacon id, seconds) and presses Start with a real mouse
     click at the button's position (Input.dispatchMouseEvent);
  4. reads the answer beside the button, then the training's progress and the replies as the page's own refresh
     shows them, until the training's reply says done;
  5. reads a beacon's room with its probabilities from the DOM, saves the DOM and a screenshot.
Prints one `key=value` line per finding (the stage checks them); exit 0 when it could drive the page at all.

Usage: web-driver.py DEVTOOLS_PORT PAGE_URL READ_TOKEN_FILE ACTION_TOKEN_FILE ROOM DEVICE SECONDS DOM_OUT PNG_OUT
"""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request


class DevTools:
    """One WebSocket connection to a DevTools target; `call` sends a command and waits for its answer."""

    def __init__(self, url, timeout=10):
        assert url.startswith("ws://")
        host_port, path = url[5:].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError("DevTools refused the WebSocket: " + head.split(b"\r\n", 1)[0].decode(errors="replace"))
        self.buffer = head.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0

    def _send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(data) < 126:
            header += bytes([0x80 | len(data)])
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        return out

    def _message(self):
        """One whole message (continuation frames joined); control frames skipped."""
        parts = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise RuntimeError("DevTools closed the WebSocket")
            if opcode in (0x9, 0xA):
                continue
            parts += payload
            if first & 0x80:
                return json.loads(parts.decode())

    def call(self, method, params=None, timeout=20):
        self.next_id += 1
        ident = self.next_id
        self._send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self._message()
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
        raise RuntimeError(f"{method}: no answer in {timeout} s")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        return result.get("result", {}).get("value")


def wait_for(what, condition, timeout, step=0.25):
    """Polls `condition` until it returns something truthy (returned) or `timeout` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    print(f"timeout=waiting for {what} ({timeout} s)", flush=True)
    return None


def main():
    port, url, read_file, action_file, room, device, seconds, dom_out, png_out = sys.argv[1:10]
    read_token = open(read_file).read().strip()
    action_token = open(action_file).read().strip()
    # The browser's DevTools endpoint answers once Chromium has started (bounded).
    version = wait_for("the DevTools endpoint", lambda: _json(f"http://127.0.0.1:{port}/json/version"), 30)
    if not version:
        return 1
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    target = json.load(urllib.request.urlopen(request, timeout=10))
    tab = DevTools(target["webSocketDebuggerUrl"])
    login = base64.b64encode(f"viewer:{read_token}".encode()).decode()
    tab.call("Network.enable")
    tab.call("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {login}"}})
    tab.call("Emulation.setDeviceMetricsOverride",
             {"width": 412, "height": 1400, "deviceScaleFactor": 1, "mobile": True})
    tab.call("Page.enable")
    tab.call("Page.navigate", {"url": url})
    listed = wait_for("beacons on the page", lambda: tab.evaluate(
        "document.readyState === 'complete' && document.querySelectorAll('tr.beacon').length"), 20)
    print(f"listed={listed or 0}", flush=True)

    # Fill the form and press Start with the mouse.
    filled = tab.evaluate(f"""(() => {{
        const f = document.getElementById("train");
        if (!f) return "no form";
        document.getElementById("action-token").value = {json.dumps(action_token)};
        f.room.value = {json.dumps(room)}; f.device.value = {json.dumps(device)};
        f.seconds.value = {json.dumps(seconds)};
        const b = f.querySelector("button"); b.scrollIntoView({{block: "center"}});
        const r = b.getBoundingClientRect();
        return JSON.stringify({{x: r.left + r.width / 2, y: r.top + r.height / 2, room: f.room.value}});
    }})()""")
    if not filled or not filled.startswith("{"):
        print(f"form={filled}", flush=True)
        return 1
    button = json.loads(filled)
    # The extra Basic header would replace the form's own `Authorization: Bearer <action token>` on its POST (a
    # browser's login does not: a request's own Authorization wins), so it is off for the click and back on for
    # the page's refreshes after the answer.
    tab.call("Network.setExtraHTTPHeaders", {"headers": {}})
    for kind in ("mousePressed", "mouseReleased"):
        tab.call("Input.dispatchMouseEvent",
                 {"type": kind, "x": button["x"], "y": button["y"], "button": "left", "clickCount": 1})
    answer = wait_for("the answer beside the button", lambda: tab.evaluate(
        "(t => t && t !== 'sending...' ? t : '')(document.querySelector('#train .result').textContent)"), 10)
    tab.call("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {login}"}})
    print(f"answer={(answer or '').strip()[:80]}", flush=True)

    # Progress and replies, as the page's refresh shows them (every few seconds), until the training is done.
    progress = set()
    start = time.monotonic()
    done = None
    while time.monotonic() - start < 45 and not done:
        state = tab.evaluate("""JSON.stringify({
            percent: (document.getElementById("training-percent") || {}).textContent || null,
            replies: [...document.querySelectorAll("#replies code")].map(c => c.textContent)})""")
        state = json.loads(state or "{}")
        if state.get("percent") is not None:
            progress.add(int(state["percent"]))
        for reply in state.get("replies", []):
            if '"op":"train"' in reply and '"state":"done"' in reply:
                done = reply
        time.sleep(0.5)
    print(f"progress={','.join(str(p) for p in sorted(progress))}", flush=True)
    print(f"done={done or ''}", flush=True)
    trained = tab.evaluate(f"""[...document.querySelectorAll("#rooms td")].map(td => td.textContent)""") or []
    print(f"trained={json.dumps(trained)}", flush=True)

    # A beacon's room with its probabilities.
    rooms = wait_for("a room with probabilities", lambda: tab.evaluate("""(() => {
        for (const td of document.querySelectorAll("td.room"))
            if (td.querySelector("b.decided") && td.querySelectorAll("span.p").length >= 2)
                return td.textContent;
        return "";
    })()"""), 20)
    print(f"room={rooms or ''}", flush=True)
    svg = tab.evaluate("document.querySelectorAll('svg.rssi polyline').length")
    print(f"rssi_plots={svg or 0}", flush=True)

    with open(dom_out, "w") as out:
        out.write(tab.evaluate("document.documentElement.outerHTML") or "")
    tab.evaluate("window.scrollTo(0, 0)")
    shot = tab.call("Page.captureScreenshot", {"format": "png"})
    with open(png_out, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    print(f"screenshot={os.path.getsize(png_out)}", flush=True)
    return 0


def _json(url):
    try:
        return json.load(urllib.request.urlopen(url, timeout=2))
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
