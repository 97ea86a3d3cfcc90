"""HTTPS + secure-websocket server for the headset page, on ONE port (one certificate to trust).

The asyncio loop runs in its own daemon thread; the control loop only calls the thread-safe
``publish_*`` methods (latest-value: a slow headset skips stale poses, it never builds a queue)
and reads frames through the ``on_frame`` callback's slot. Static files are served from a fixed
whitelist of folders (the page and node_modules builds: no CDN). The websocket at ``/ws``
requires the pairing code (``?code=``); without it the handshake is refused with 403. A browser
cannot read that status, so ``/pairing?code=`` answers the same check over plain HTTPS and the
page can tell "pairing code rejected" from "network down" (docs/headset.md).

The page must know when it is told nothing: when idle the server sends ``{"type": "alive"}``
every ``KEEPALIVE_S``, so a silent socket means a dead or frozen app, shown within ~1 s. One
headset at a time (``admission``). Nothing the server thread runs writes to a stream: logging is
rate-limited and written from another thread (``logs``), so a full stderr never stalls it.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import ssl
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Response

from devices.base import DeviceError, DropCounter
from devices.webxr.admission import (
    CLOSE_APP_STOPPED,
    CLOSE_BUSY,
    CLOSE_REPLACED,
    CLOSE_TAKEN_OVER,
    REASON_APP_STOPPED,
    REASON_BUSY,
    REASON_REPLACED,
    REASON_TAKEN_OVER,
    Admission,
    admit,
)
from devices.webxr.certs import CertInfo, ensure_certificate, local_addresses
from devices.webxr.logs import QuietLog
from devices.webxr.messages import MessageError, load_json, parse_ack, parse_action, parse_frame
from devices.webxr.pairing import ensure_pairing_code
from devices.webxr.scene_msgs import hud_message, poses_message, scene_message

WEB_ROOT = Path(__file__).resolve().parent
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css", ".json": "application/json", ".pem": "application/x-x509-ca-cert",
                 ".png": "image/png", ".map": "application/json"}
log = logging.getLogger(__name__)
KEEPALIVE_S = 0.25            # idle -> an "alive" message; the page calls 1 s of silence a dead link
ALIVE = '{"type": "alive"}'
# Websocket pings find a headset whose Wi-Fi died without a close (half-open TCP) within ~40 s
# (websockets' defaults); until then a reconnect from the same page replaces it (admission) and
# another page is refused (it can take over). Not shorter: a pong queues behind every frame the
# client sent before it, so a backlog on a loaded machine would read as a dead headset (the
# 10,000-message fuzz test dropped with 5 s / 20 s).
PING_INTERVAL_S, PING_TIMEOUT_S, CLOSE_TIMEOUT_S = 20.0, 20.0, 2.0


class _Client:
    def __init__(self, ws: ServerConnection, client_id: str):
        self.ws = ws
        self.client_id = client_id
        self.wake = asyncio.Event()
        self.sent: dict[str, int] = {}
        self.sender: asyncio.Task | None = None


class HeadsetServer:
    """``on_frame(OperatorFrame)`` is called (in the server thread) for every accepted frame,
    ``on_action(name, arg)`` for every valid operator action (a HUD button the wearer pinched).

    The pairing code is ``pairing_code`` if given, else the one stored in the config dir (made on
    the first start, see ``pairing``); ``new_pairing_code`` replaces the stored one. It is known
    from ``start()`` on, like the certificate: the constructor does no I/O."""

    def __init__(self, host: str = "0.0.0.0", port: int = 8443, config_dir=None,
                 pairing_code: str | None = None, on_frame: Callable | None = None,
                 web_root: Path = WEB_ROOT, device_name: str = "webxr", new_pairing_code: bool = False,
                 on_action: Callable | None = None):
        self.host, self.requested_port = host, port
        self.config_dir = config_dir
        self._fixed_code, self._renew_code = pairing_code, new_pairing_code
        self.pairing_code = pairing_code or ""
        self.on_frame = on_frame or (lambda frame: None)
        self.on_action = on_action or (lambda name, arg: None)
        self.last_error = ""                      # the last dropped action's error (stats, the log)
        self.device_name = device_name
        self.routes = {"/static/": web_root / "static",
                       "/vendor/three/": web_root / "node_modules/three/build",
                       "/vendor/iwer/": web_root / "node_modules/iwer/build"}
        self.index = web_root / "static/index.html"
        self.cert: CertInfo | None = None
        self.port = 0
        self.drops = DropCounter()
        # refused: wrong pairing code (403); busy: a second headset turned away; takeovers /
        # replaced: the connected headset dropped for an explicit takeover / its own reconnect.
        self.counts = {"received": 0, "frames": 0, "acks": 0, "hellos": 0, "actions": 0, "connects": 0,
                       "disconnects": 0, "refused": 0, "busy": 0, "takeovers": 0, "replaced": 0,
                       "pairing_checks": 0, "http": 0, "http_404": 0}
        self.log = QuietLog(log)
        self.last_ack: dict[str, tuple[int, int]] = {}
        self._outbox: dict[str, tuple[int, str]] = {}
        self._pose_seq = 0
        self._out_lock = threading.Lock()
        self._clients: set[_Client] = set()
        self._active: _Client | None = None        # the one headset whose frames are used
        self._stop_reason = REASON_APP_STOPPED
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            raise DeviceError("headset server already started")
        self.cert = ensure_certificate(self.config_dir)
        self.pairing_code = ensure_pairing_code(self.config_dir, self._fixed_code, self._renew_code)
        self._renew_code = False          # a restart of this server keeps the code it just made
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(ready, errors), name="headset-server",
                                        daemon=True)
        self._thread.start()
        if not ready.wait(timeout) or errors:
            self.stop()
            raise DeviceError(f"headset server could not listen on {self.host}:{self.requested_port}: "
                              f"{errors[0] if errors else 'timeout'}")

    def _run(self, ready: threading.Event, errors: list) -> None:
        try:
            asyncio.run(self._main(ready))
        except BaseException as exc:  # noqa: BLE001 - reported to start() through ``errors``
            errors.append(exc)
            ready.set()

    async def _main(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop.set_exception_handler(self.log.exception_handler)
        self._stop = asyncio.Event()
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(self.cert.cert_path, self.cert.key_path)
        server = await serve(self._handler, self.host, self.requested_port, ssl=tls,
                             process_request=self._process_request, max_size=4 * (1 << 20),
                             ping_interval=PING_INTERVAL_S, ping_timeout=PING_TIMEOUT_S,
                             close_timeout=CLOSE_TIMEOUT_S, logger=self.log.adapter())
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        await self._stop.wait()
        try:
            # The last HUD (e.g. "episode ended") reaches the page before it is told why the
            # connection ends, so the page never guesses "network drop" for a clean stop.
            await asyncio.wait_for(asyncio.gather(*(self._goodbye(c) for c in list(self._clients)),
                                                  return_exceptions=True), 1.0)
        except TimeoutError:
            pass
        server.close()
        try:
            # A client that never closes its side (e.g. after an HTTP error) must not hold us up;
            # asyncio.run cancels whatever is left.
            await asyncio.wait_for(server.wait_closed(), 1.0)
        except TimeoutError:
            self.log.event("close", "headset server: some connections did not close in time", logging.INFO)

    async def _goodbye(self, client: _Client) -> None:
        if client.sender is not None:
            client.sender.cancel()
        try:
            await self._flush(client)
            await client.ws.close(CLOSE_APP_STOPPED, self._stop_reason)
        except ConnectionClosed:
            pass

    def stop(self, reason: str = REASON_APP_STOPPED) -> None:
        """Stop serving; a connected page is sent what is pending, then ``reason`` (<= 123 bytes)."""
        self._stop_reason = reason.encode()[:123].decode(errors="ignore")
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5.0)
        self._thread = self._loop = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def page_url(self, host: str | None = None, emulate: bool = False) -> str:
        if not host:        # the address served on, or (serving on all) the one a headset can reach
            host = self.host if self.host not in ("", "0.0.0.0", "::") else \
                next((a for a in local_addresses() if a != "127.0.0.1"), "127.0.0.1")
        return f"https://{host}:{self.port}/?code={self.pairing_code}" + ("&emulate=1" if emulate else "")

    # ---- HTTP: static files and the pairing gate --------------------------------------------
    def _process_request(self, connection: ServerConnection, request):
        url = urlsplit(request.path)
        if url.path == "/ws":
            if not self._code_ok(url.query):
                self.counts["refused"] += 1
                return connection.respond(HTTPStatus.FORBIDDEN, "pairing code required\n")
            return None
        self.counts["http"] += 1
        if url.path == "/pairing":        # the page's "is it my code or the network?" question
            self.counts["pairing_checks"] += 1
            if self._code_ok(url.query):
                return connection.respond(HTTPStatus.OK, "pairing code accepted\n")
            return connection.respond(HTTPStatus.FORBIDDEN, "wrong pairing code\n")
        path = self._resolve(url.path)
        if path is None:
            self.counts["http_404"] += 1
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        return self._file_response(path)

    def _code_ok(self, query: str) -> bool:
        code = parse_qs(query).get("code", [""])[0]
        return bool(self.pairing_code) and hmac.compare_digest(code.encode(), self.pairing_code.encode())

    def _resolve(self, path: str) -> Path | None:
        if path in ("/", "/index.html"):
            return self.index if self.index.is_file() else None
        if path == "/cert.pem" and self.cert is not None:
            return self.cert.cert_path
        for prefix, folder in self.routes.items():
            if path.startswith(prefix):
                target = (folder / path[len(prefix):]).resolve()
                if target.is_relative_to(folder.resolve()) and target.is_file():
                    return target
        return None

    @staticmethod
    def _file_response(path: Path) -> Response:
        body = path.read_bytes()
        headers = Headers([("Content-Type", CONTENT_TYPES.get(path.suffix, "application/octet-stream")),
                           ("Content-Length", str(len(body))), ("Cache-Control", "no-cache"),
                           ("Connection", "close")])
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)

    # ---- websocket ---------------------------------------------------------------------------
    async def _handler(self, ws: ServerConnection) -> None:
        query = parse_qs(urlsplit(ws.request.path).query)
        client_id = query.get("client", [""])[0][:64]
        decision = admit(None if self._active is None else self._active.client_id, client_id,
                         query.get("takeover", [""])[0] == "1")
        if decision is Admission.REFUSE:
            self.counts["busy"] += 1
            await ws.close(CLOSE_BUSY, REASON_BUSY)
            return
        if decision is not Admission.ACCEPT:
            replaced = decision is Admission.REPLACE
            self.counts["replaced" if replaced else "takeovers"] += 1
            self._retire(self._active, *((CLOSE_REPLACED, REASON_REPLACED) if replaced
                                         else (CLOSE_TAKEN_OVER, REASON_TAKEN_OVER)))
        client = _Client(ws, client_id)
        self._clients.add(client)
        self._active = client
        self.counts["connects"] += 1
        client.wake.set()                 # a (re)connecting page gets scene, HUD and poses at once
        client.sender = asyncio.create_task(self._sender(client))
        try:
            async for message in ws:
                if client is self._active:
                    self.handle_message(message, time.monotonic())
                else:                     # retired, still draining: never drives the robot
                    self.counts["received"] += 1
                    self.drops.drop("not_active")
        except ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == 1009:      # message above max_size
                self.counts["received"] += 1
                self.drops.drop("too_large")
        finally:
            client.sender.cancel()
            self._clients.discard(client)
            if self._active is client:
                self._active = None
            self.counts["disconnects"] += 1

    def _retire(self, client: _Client, code: int, reason: str) -> None:
        """Drop ``client`` as the headset now; its close handshake runs on its own (a dead peer
        would hold an awaited close for CLOSE_TIMEOUT_S)."""
        if self._active is client:
            self._active = None
        asyncio.create_task(client.ws.close(code, reason))

    def handle_message(self, message, received: float) -> bool:
        """Validate and dispatch one message; every message is accepted or dropped by reason."""
        self.counts["received"] += 1
        try:
            msg = load_json(message)
            kind = msg["type"]
            if kind == "frame":
                frame = parse_frame(msg, received, self.device_name)
                self.on_frame(frame)
                self.counts["frames"] += 1        # after: a frame on_frame failed on is a drop only
            elif kind == "ack":
                ack = parse_ack(msg)
                self.counts["acks"] += 1
                self.last_ack[ack.what] = (ack.seq, ack.count)
            elif kind == "hello":
                self.counts["hellos"] += 1
            elif kind == "action":
                name, arg = parse_action(msg)
                self.on_action(name, arg)
                self.counts["actions"] += 1
            else:
                raise MessageError("type", f"unknown message type {kind[:40]!r}")
            return True
        except MessageError as exc:
            self.drops.drop(exc.reason)
            if exc.reason == "action":            # a page's bug its author must see: logged, rate-limited
                self.last_error = str(exc)
                self.log.event("action", f"headset action dropped: {exc}")
        except Exception as exc:  # noqa: BLE001 - a message must never take the server down
            self.drops.drop("internal")
            self.log.event("internal", f"headset message handling failed: {type(exc).__name__}: {str(exc)[:160]}")
        return False

    async def _sender(self, client: _Client) -> None:
        try:
            while True:
                try:
                    await asyncio.wait_for(client.wake.wait(), KEEPALIVE_S)
                except TimeoutError:
                    await client.ws.send(ALIVE)
                    continue
                client.wake.clear()
                await self._flush(client)
        except ConnectionClosed:
            pass

    async def _flush(self, client: _Client) -> None:
        """Send ``client`` every outbox message it has not seen (latest value per kind)."""
        for kind in ("scene", "hud", "poses"):
            with self._out_lock:
                version, text = self._outbox.get(kind, (0, ""))
            if text and client.sent.get(kind) != version:
                await client.ws.send(text)
                client.sent[kind] = version

    def _post(self, kind: str, text: str) -> None:
        with self._out_lock:
            version = self._outbox.get(kind, (0, ""))[0] + 1
            self._outbox[kind] = (version, text)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for client in self._clients:
            client.wake.set()

    # ---- publishing API (thread-safe, never blocks) -----------------------------------------
    def publish_scene(self, geoms: list[dict], world_to_operator=(0.0, 0.0, 0.0), hud_anchor=None) -> None:
        """Scene geometry, sent to every page now and on each (re)connect. See ``scene_msgs``."""
        self._post("scene", scene_message(geoms, world_to_operator, hud_anchor))

    def publish_poses(self, poses: dict[str, np.ndarray], seq: int | None = None) -> None:
        """Body poses (7,) x y z qw qx qy qz, world frame; latest value wins. The page acks
        the ``seq`` it applied (``stats()['last_ack']['poses']``); default: a running count."""
        self._pose_seq = self._pose_seq + 1 if seq is None else int(seq)
        self._post("poses", poses_message(poses, self._pose_seq))

    def publish_hud(self, hud: dict) -> None:
        """HUD (``scene_msgs.hud_message``): instruction, recording, subtasks, status, engage,
        reason, ended, result. Latest value wins; a (re)connecting page gets the current one."""
        self._post("hud", hud_message(hud))

    def disconnect_clients(self) -> None:
        """Drop every headset connection (the page reconnects by itself); used by tests and UI."""
        async def close_all():
            for client in list(self._clients):
                await client.ws.close(1012, "server restart of the connection")
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(close_all(), self._loop).result(5.0)

    def stats(self) -> dict:
        accepted = self.counts["frames"] + self.counts["acks"] + self.counts["hellos"] + self.counts["actions"]
        return {**self.counts, "accepted": accepted,
                "dropped": self.drops.snapshot(), "clients": len(self._clients),
                "last_ack": dict(self.last_ack), "last_error": self.last_error,
                "log_suppressed": self.log.suppressed, "log_discarded": self.log.discarded}
