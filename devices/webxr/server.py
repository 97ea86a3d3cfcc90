"""HTTPS + secure-websocket server for the headset page, on ONE port (one certificate to trust).

The asyncio loop runs in its own daemon thread; the control loop only calls the thread-safe
``publish_*`` methods (latest-value: a slow headset skips stale poses, it never builds a queue)
and reads frames through the ``on_frame`` callback's slot. Static files are served from a fixed
whitelist of folders (the page and node_modules builds: no CDN). The websocket at ``/ws``
requires the pairing code (``?code=``); without it the handshake is refused with 403.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import ssl
import threading
import time
from http import HTTPStatus
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import numpy as np
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Response
from websockets.exceptions import ConnectionClosed

from devices.base import DeviceError, DropCounter
from devices.webxr.certs import CertInfo, ensure_certificate, local_addresses
from devices.webxr.messages import MessageError, load_json, parse_ack, parse_frame
from devices.webxr.scene_msgs import hud_message, poses_message, scene_message

WEB_ROOT = Path(__file__).resolve().parent
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"     # no 0/O, 1/I: read off a screen
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css", ".json": "application/json", ".pem": "application/x-x509-ca-cert",
                 ".png": "image/png", ".map": "application/json"}
log = logging.getLogger(__name__)


def new_pairing_code(length: int = 8) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


class _Client:
    def __init__(self, ws: ServerConnection):
        self.ws = ws
        self.wake = asyncio.Event()
        self.sent: dict[str, int] = {}


class HeadsetServer:
    """``on_frame(OperatorFrame)`` is called (in the server thread) for every accepted frame."""

    def __init__(self, host: str = "0.0.0.0", port: int = 8443, config_dir=None,
                 pairing_code: str | None = None, on_frame: Callable | None = None,
                 web_root: Path = WEB_ROOT, device_name: str = "webxr"):
        self.host, self.requested_port = host, port
        self.config_dir = config_dir
        self.pairing_code = pairing_code or new_pairing_code()
        self.on_frame = on_frame or (lambda frame: None)
        self.device_name = device_name
        self.routes = {"/static/": web_root / "static",
                       "/vendor/three/": web_root / "node_modules/three/build",
                       "/vendor/iwer/": web_root / "node_modules/iwer/build"}
        self.index = web_root / "static/index.html"
        self.cert: CertInfo | None = None
        self.port = 0
        self.drops = DropCounter()
        self.counts = {"received": 0, "frames": 0, "acks": 0, "hellos": 0, "connects": 0,
                       "disconnects": 0, "refused": 0, "http": 0, "http_404": 0}
        self.last_ack: dict[str, tuple[int, int]] = {}
        self._outbox: dict[str, tuple[int, str]] = {}
        self._pose_seq = 0
        self._out_lock = threading.Lock()
        self._clients: set[_Client] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            raise DeviceError("headset server already started")
        self.cert = ensure_certificate(self.config_dir)
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
        self._stop = asyncio.Event()
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(self.cert.cert_path, self.cert.key_path)
        server = await serve(self._handler, self.host, self.requested_port, ssl=tls,
                             process_request=self._process_request, max_size=4 * (1 << 20),
                             logger=logging.getLogger("devices.webxr.ws"))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        await self._stop.wait()
        server.close()
        try:
            # A client that never closes its side (e.g. after an HTTP error) must not hold us up;
            # asyncio.run cancels whatever is left.
            await asyncio.wait_for(server.wait_closed(), 1.0)
        except TimeoutError:
            log.info("headset server: some connections did not close in time")

    def stop(self) -> None:
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
            code = parse_qs(url.query).get("code", [""])[0]
            if not hmac.compare_digest(code.encode(), self.pairing_code.encode()):
                self.counts["refused"] += 1
                return connection.respond(HTTPStatus.FORBIDDEN, "pairing code required\n")
            return None
        self.counts["http"] += 1
        path = self._resolve(url.path)
        if path is None:
            self.counts["http_404"] += 1
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        return self._file_response(path)

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
        client = _Client(ws)
        self._clients.add(client)
        self.counts["connects"] += 1
        client.wake.set()                 # a (re)connecting page gets scene, HUD and poses at once
        sender = asyncio.create_task(self._sender(client))
        try:
            async for message in ws:
                self.handle_message(message, time.monotonic())
        except ConnectionClosed as exc:
            if exc.sent is not None and exc.sent.code == 1009:      # message above max_size
                self.counts["received"] += 1
                self.drops.drop("too_large")
        finally:
            sender.cancel()
            self._clients.discard(client)
            self.counts["disconnects"] += 1

    def handle_message(self, message, received: float) -> bool:
        """Validate and dispatch one message; every message is accepted or dropped by reason."""
        self.counts["received"] += 1
        try:
            msg = load_json(message)
            kind = msg["type"]
            if kind == "frame":
                frame = parse_frame(msg, received, self.device_name)
                self.counts["frames"] += 1
                self.on_frame(frame)
            elif kind == "ack":
                ack = parse_ack(msg)
                self.counts["acks"] += 1
                self.last_ack[ack.what] = (ack.seq, ack.count)
            elif kind == "hello":
                self.counts["hellos"] += 1
            else:
                raise MessageError("type", f"unknown message type {kind[:40]!r}")
            return True
        except MessageError as exc:
            self.drops.drop(exc.reason)
        except Exception:  # noqa: BLE001 - a message must never take the server down
            log.exception("headset message handling failed")
            self.drops.drop("internal")
        return False

    async def _sender(self, client: _Client) -> None:
        try:
            while True:
                await client.wake.wait()
                client.wake.clear()
                for kind in ("scene", "hud", "poses"):
                    with self._out_lock:
                        version, text = self._outbox.get(kind, (0, ""))
                    if text and client.sent.get(kind) != version:
                        await client.ws.send(text)
                        client.sent[kind] = version
        except ConnectionClosed:
            pass

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
    def publish_scene(self, geoms: list[dict], world_to_operator=(0.0, 0.0, 0.0)) -> None:
        """Scene geometry, sent to every page now and on each (re)connect. See ``scene_msgs``."""
        self._post("scene", scene_message(geoms, world_to_operator))

    def publish_poses(self, poses: dict[str, np.ndarray], seq: int | None = None) -> None:
        """Body poses (7,) x y z qw qx qy qz, world frame; latest value wins. The page acks
        the ``seq`` it applied (``stats()['last_ack']['poses']``); default: a running count."""
        self._pose_seq = self._pose_seq + 1 if seq is None else int(seq)
        self._post("poses", poses_message(poses, self._pose_seq))

    def publish_hud(self, hud: dict) -> None:
        """HUD: ``instruction`` (str), ``recording`` (bool), ``subtasks`` [{name, done}], ``status``."""
        self._post("hud", hud_message(hud))

    def disconnect_clients(self) -> None:
        """Drop every headset connection (the page reconnects by itself); used by tests and UI."""
        async def close_all():
            for client in list(self._clients):
                await client.ws.close(1012, "server restart of the connection")
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(close_all(), self._loop).result(5.0)

    def stats(self) -> dict:
        accepted = self.counts["frames"] + self.counts["acks"] + self.counts["hellos"]
        return {**self.counts, "accepted": accepted,
                "dropped": self.drops.snapshot(), "clients": len(self._clients),
                "last_ack": dict(self.last_ack)}
