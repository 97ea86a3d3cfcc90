"""What the operator is told: `teleop record --device webxr --port P --host H` prints the real
URL https://H:P/?code=..., the pairing code, the certificate's real fingerprint and a QR code of
that URL once the server listens; the URL works; the episode's time starts at engage. The app's
device panel shows the same, and its QR image decodes to that URL."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_devices_webxr import _frame_msg, _tls
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import devices
from devices.base import ConnectionInfo
from devices.webxr.certs import ensure_certificate
from devices.webxr.pairing import PAIRING_NAME

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _drain(ws) -> None:
    try:
        while True:
            ws.recv()
    except ConnectionClosed:
        pass


def _stream(url: str, stop: threading.Event) -> None:
    """A headset: frames at ~30 Hz with the device's engage flag on (the episode's clock starts)."""
    with connect(url, ssl=_tls(), open_timeout=10) as ws:
        threading.Thread(target=_drain, args=(ws,), daemon=True).start()     # a page reads, too
        seq = 0
        while not stop.is_set():
            msg = _frame_msg(seq)
            msg["engage"] = seq > 20           # ~0.7 s after connecting
            try:
                ws.send(json.dumps(msg))
            except ConnectionClosed:
                return
            seq += 1
            time.sleep(1 / 30)


def test_record_banner_shows_the_real_url_fingerprint_and_qr(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "teleop", "record", "--device", "webxr", "--task", "pick_up_peach",
         "--port", str(port), "--host", "127.0.0.1", "--config-dir", str(tmp_path), "--no-save",
         "--max-seconds", "0.4", "--json"],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MUJOCO_GL": "egl"})
    stop = threading.Event()
    try:
        lines = []
        while not lines or "time starts when you engage" not in lines[-1]:
            line = proc.stderr.readline()
            assert line, f"record exited ({proc.poll()}): {''.join(lines)}"
            lines.append(line)
        banner = "".join(lines[lines.index(next(ln for ln in lines if ln.startswith("headset server"))):-1])
        code = (tmp_path / PAIRING_NAME).read_text().strip()
        url = f"https://127.0.0.1:{port}/?code={code}"
        expected = ConnectionInfo(f"headset server on 127.0.0.1:{port}", url=url, pairing_code=code,
                                  fingerprint=ensure_certificate(tmp_path).fingerprint).banner()
        # Text and QR code (drawn from the URL, so equal text means the QR carries this URL).
        assert banner.rstrip("\n") == expected.rstrip("\n")
        assert re.search(r"certificate SHA-256: ([0-9A-F]{2}:){31}[0-9A-F]{2}\n", banner)
        streamer = threading.Thread(target=_stream, args=(f"wss://127.0.0.1:{port}/ws?code={code}", stop))
        streamer.start()                        # the printed code opens the websocket
        out, err = proc.communicate(timeout=60)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    summary = json.loads(out.strip().splitlines()[-1])
    # 0.4 s = 10 ticks from the engage: more than 10 in all because the ticks before it (the
    # headset connecting, then ~0.7 s not engaged) do not count; counted from the start it was 10.
    assert summary["ticks"] > 10 and summary["terminated_by"] == "horizon", summary


def test_device_panel_shows_url_pairing_fingerprint_and_a_qr_of_the_url(qtbot, tmp_path):
    cv2 = pytest.importorskip("cv2")
    from PyQt6.QtGui import QImage

    from ui.device_panel import DevicePanel
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    try:
        info = dev.connection_info()
        panel = DevicePanel([])
        qtbot.addWidget(panel)
        panel.show_connection(info)
    finally:
        dev.close()
    assert f":{dev.server.port}/?code={dev.pairing_code}" in info.url and info.url.startswith("https://127.0.0.1:")
    text = panel.headset.text()
    assert info.url in text and dev.pairing_code in text
    assert info.fingerprint == ensure_certificate(tmp_path).fingerprint and info.fingerprint in text
    image = panel.qr.pixmap().toImage().convertToFormat(QImage.Format.Format_Grayscale8)
    ptr = image.constBits()
    ptr.setsize(image.sizeInBytes())
    pixels = np.frombuffer(ptr, np.uint8).reshape(image.height(), image.bytesPerLine())[:, :image.width()]
    decoded, _, _ = cv2.QRCodeDetector().detectAndDecode(np.pad(pixels, 20, constant_values=255))
    assert decoded == info.url
