"""Bad headset messages are counted drops with rate-limited, one-line logging, and the server never
blocks on its stderr: here stderr is a pipe nobody reads, already full and blocked when 1,504 bad
messages arrive (400-digit integers among them), and the server keeps answering and counting."""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

from test_devices_webxr import _frame_msg, _tls
from websockets.sync.client import connect

from devices.webxr.logs import QuietLog

ROOT = Path(__file__).resolve().parents[1]

# The server process: an app's usual logging setup (a stderr handler), then a thread that fills
# stderr and blocks in write() holding the stream, as a full pipe does. Stats on stdin's request.
SERVER = textwrap.dedent("""
    import json, logging, sys, threading
    logging.basicConfig(level=logging.INFO)
    from devices.webxr.server import HeadsetServer

    def on_frame(frame):
        raise RuntimeError("a bug in frame handling")     # every valid frame: an "internal" drop

    server = HeadsetServer("127.0.0.1", 0, config_dir=sys.argv[1], pairing_code="PIPETEST", on_frame=on_frame)
    server.start()
    def fill():
        sys.stderr.write("x" * (4 << 20))
        sys.stderr.flush()
    threading.Thread(target=fill, daemon=True).start()
    print(json.dumps({"port": server.port}), flush=True)
    for line in sys.stdin:
        print(json.dumps(server.stats()), flush=True)
""")


def _bad_messages(n: int) -> list[str]:
    huge = "1" + "0" * 399
    good = json.dumps(_frame_msg(1))
    kinds = [good.replace('"seq": 1', f'"seq": {huge}'),           # the 400-digit integer
             good.replace('"t": 10.011111111111111', f'"t": {huge}'),
             good.replace('"v": 1', f'"v": -{huge}'),
             good[:-7], "{", '{"type": "nope"}', good.replace("1.1", "NaN", 1),
             good]                                                   # valid: on_frame raises
    return [kinds[i % len(kinds)] for i in range(n)]


def _stats(proc) -> dict:
    proc.stdin.write("stats\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_server_keeps_answering_with_stderr_a_full_pipe_nobody_reads(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(tmp_path)], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    try:
        port = json.loads(proc.stdout.readline())["port"]
        time.sleep(0.5)                               # the filler thread is blocked by now
        n = 1504                                      # 8 kinds x 188
        with connect(f"wss://127.0.0.1:{port}/ws?code=PIPETEST", ssl=_tls(), open_timeout=10) as ws:
            for message in _bad_messages(n):
                ws.send(message)
            ws.send(json.dumps({"type": "hello", "v": 1}))
            deadline = time.monotonic() + 30
            while (stats := _stats(proc))["received"] < n + 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert ws.recv(timeout=5)                 # still sending (keepalive) to this page
        https = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                            urllib.request.HTTPSHandler(context=_tls()))
        assert b"importmap" in https.open(f"https://127.0.0.1:{port}/", timeout=5).read()
        stats = _stats(proc)
        dropped = stats["dropped"]
        assert stats["received"] == n + 1 and stats["hellos"] == 1
        assert stats["accepted"] + sum(dropped.values()) == n + 1
        assert dropped["range"] == 3 * n // 8 and dropped["internal"] == n // 8, dropped
        assert dropped["json"] == 2 * n // 8 and dropped["type"] == n // 8 and dropped["nonfinite"] == n // 8
        assert stats["log_suppressed"] >= n // 8 - 1       # one "internal" line, the rest counted
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_quiet_log_rate_limits_per_kind_and_never_blocks():
    now = [0.0]
    logger = logging.getLogger("test.quiet")
    logger.setLevel(logging.INFO)
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
    handler = Collect()
    logger.addHandler(handler)
    try:
        quiet = QuietLog(logger, interval=10.0, clock=lambda: now[0])
        for _ in range(500):
            quiet.event("a", "bad thing")
        quiet.event("b", "other thing")
        now[0] = 11.0
        quiet.event("a", "bad thing")
        assert quiet.flush()
        assert lines == ["bad thing", "other thing", "bad thing (499 more like this in the last 10 s not logged)"]
        assert quiet.suppressed == 499
        try:
            raise OverflowError("int too large to convert to float")
        except OverflowError:
            quiet.adapter().error("handler failed for %s", "x", exc_info=True)
        assert quiet.flush() and lines[-1] == "handler failed for x: OverflowError: int too large to convert to float"
    finally:
        logger.removeHandler(handler)
