"""Drive Debian's headless Chromium over the Chrome DevTools Protocol (tests, smoke checks).

No browser download and no Playwright: the DevTools websocket is spoken with ``websockets``.
"""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect as ws_connect

from devices.base import DeviceError

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--ignore-certificate-errors", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
         "--window-size=1024,768")


class HeadlessChromium:
    """A fresh Chromium profile per instance; ``evaluate`` runs JavaScript in the page."""

    def __init__(self, executable: str = CHROMIUM, flags: tuple[str, ...] = FLAGS):
        self.executable, self.flags = executable, flags
        self.profile: Path | None = None
        self.proc: subprocess.Popen | None = None
        self._ws = None
        self._ids = itertools.count(1)
        self.console: list[str] = []

    def start(self, url: str, timeout: float = 30.0) -> None:
        if not Path(self.executable).exists():
            raise DeviceError(f"{self.executable} not found: apt-get install chromium")
        self.profile = Path(tempfile.mkdtemp(prefix="teleop-chromium-"))
        log = open(self.profile / "chromium.log", "wb")
        self.proc = subprocess.Popen([self.executable, *self.flags, f"--user-data-dir={self.profile}",
                                      "--remote-debugging-port=0", url],
                                     stdout=log, stderr=subprocess.STDOUT)
        port = self._devtools_port(timeout)
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))    # never via a proxy
        pages = json.load(direct.open(f"http://127.0.0.1:{port}/json/list", timeout=5))
        page = next(p for p in pages if p["type"] == "page")
        self._ws = ws_connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10).__enter__()
        self.call("Runtime.enable")

    def _devtools_port(self, timeout: float) -> int:
        marker = self.profile / "DevToolsActivePort"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self.proc.poll() is not None:
                raise DeviceError(f"chromium exited ({self.proc.returncode}); "
                                  f"see {self.profile}/chromium.log")
            time.sleep(0.05)
        raise DeviceError("chromium did not open its DevTools port")

    def call(self, method: str, timeout: float = 15.0, **params) -> dict:
        msg_id = next(self._ids)
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = json.loads(self._ws.recv(timeout=max(0.01, end - time.monotonic())))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise DeviceError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)
        raise DeviceError(f"{method}: no answer in {timeout} s")

    def _event(self, msg: dict) -> None:
        params = msg.get("params", {})
        if msg.get("method") == "Runtime.consoleAPICalled":
            args = params.get("args", [])
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
        elif msg.get("method") == "Runtime.exceptionThrown":
            self.console.append("EXCEPTION " + json.dumps(params.get("exceptionDetails", {}))[:500])

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise DeviceError(f"page error: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 20.0, interval: float = 0.1):
        """Poll ``expression`` until truthy; returns its value or raises with the page's state."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(interval)
        state = self.evaluate("JSON.stringify(window.__teleop || null)")
        raise DeviceError(f"timed out waiting for {expression!r}; page state {state}; "
                          f"console {self.console[-10:]}")

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            self.proc = None
        if self.profile is not None:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
