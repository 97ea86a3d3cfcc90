"""The whole control loop, paced at the control rate: with the synthetic operator (real-time clock) and with a
glove streaming over a real ZeroMQ socket from ``teleop glove-sim`` in another process."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np

from teleop.control.episode import Episode, EpisodeOptions

NAME = "loop"


def add_arguments(parser) -> None:
    parser.add_argument("--task", default="put_peach_in_fruit_bowl")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per device (default 8)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _figures(reports) -> dict:
    def pct(key, q):
        v = np.array([getattr(r, key) for r in reports], float)
        v = v[np.isfinite(v)]
        return round(float(np.percentile(v, q)), 3) if v.size else None
    return {"tick_ms_p50": pct("tick_ms", 50), "tick_ms_p99": pct("tick_ms", 99),
            "frame_age_ms_p50": pct("frame_age_ms", 50), "frame_age_ms_p99": pct("frame_age_ms", 99),
            "overhead_ms_p50": pct("overhead_ms", 50), "overhead_ms_p99": pct("overhead_ms", 99),
            "retarget_ms_p99": pct("retarget_ms", 99), "physics_ms_p99": pct("physics_ms", 99),
            "ticks": len(reports)}


def _paced(episode: Episode, seconds: float) -> dict:
    episode.opts.max_seconds = seconds
    episode.realtime = True
    episode.run(None)
    figures = _figures(episode.reports[10:])            # skip the first ticks: connection, engage
    figures["followed_ticks"] = sum(r.engage_state in ("easing", "engaged") for r in episode.reports)
    return figures


def run(args) -> dict:
    synthetic = _paced(Episode(EpisodeOptions(task=args.task, device="synthetic", realtime=True)), args.seconds)
    port, haptics = _free_port(), _free_port()
    glove_sim = subprocess.Popen([sys.executable, "-m", "teleop", "glove-sim", "--bind", f"tcp://127.0.0.1:{port}",
                                  "--haptics", f"tcp://127.0.0.1:{haptics}", "--duration", str(args.seconds + 10),
                                  "--engage-after", "0.5", "--print-every", "100"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)                                  # let the publisher bind
        glove = _paced(Episode(EpisodeOptions(task=args.task, device="glove", device_options={
            "endpoint": f"tcp://127.0.0.1:{port}", "haptics_bind": f"tcp://127.0.0.1:{haptics}"})), args.seconds)
    finally:
        glove_sim.terminate()
        glove_sim.wait(10)
    return {"task": args.task, "seconds": args.seconds, "synthetic": synthetic, "glove": glove}
