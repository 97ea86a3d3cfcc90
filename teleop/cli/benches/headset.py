"""Headset latency: headless Chromium + iwer against the real server and the 25 Hz control loop;
hand pose steps in the page -> the robot's pose applied in the page.

The emulated right hand holds still, then steps ``--step-cm`` sideways every ``--interval`` s
(alternating, so it stays in place). For each step:

* ``latency_ms``: from the XR frame that first carries the stepped hand to the page applying the
  robot poses of the first control tick that used that frame (or a later one): everything
  between hand and picture, without the robot's own dynamics;
* ``motion_latency_ms``: until the applied robot palm has moved ``MOVED_MM`` toward where that
  step takes it (adds the servo, filters and velocity clamp).

Both clocks are this machine's wall clock (the page's ``performance.timeOrigin + now()``), so
``breakdown_ms`` splits the pipeline: page -> server, waiting for the next tick, the tick, server
-> page applied. Also frames/s in (page -> server) and out (robot poses applied in the page), and
hold ticks once engaged (a steady stream should give none).
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np

from devices.webxr.browser import FLAGS, HeadlessChromium
from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.loop import RealtimeLoop

NAME = "headset"
MOVED_MM = 2.0
RIGHT_HAND_XR = [0.18, 1.1, -0.35]          # the emulated right hand's rest position (app.js)

# Page-side instrumentation through the page's hooks: the time of each frame carrying a step,
# and every robot-pose application with the palm's position.
INSTRUMENT = """
window.__bench = {applied: [], steps: [], pending: null, body: %r};
__teleopHooks.onPoses = (msg, now) => {
  const b = __teleopView.bodies.get(__bench.body);
  const p = b ? b.position : {x: NaN, y: NaN, z: NaN};
  __bench.applied.push([msg.seq, performance.timeOrigin + now, p.x, p.y, p.z]);
};
__teleopHooks.onFrame = (seq, now) => {
  if (__bench.pending !== null) {
    __bench.steps.push([seq, performance.timeOrigin + now, __bench.pending]);
    __bench.pending = null;
  }
};
__teleopEmulation.motion = 'hold';
true
"""


def add_arguments(parser) -> None:
    parser.add_argument("--task", default="pick_up_peach")
    parser.add_argument("--steps", type=int, default=20, help="hand steps (default 20)")
    parser.add_argument("--step-cm", type=float, default=4.0, help="step size (default 4 cm)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between steps (default 1)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds engaged before the first step")
    parser.add_argument("--render", choices=("fast", "full"), default="fast",
                        help="the page's rendering: fast (the emulator's default: no MSAA, Lambert) or full")
    parser.add_argument("--window", default="640x480",
                        help="browser window WxH (default 640x480); iwer renders both eyes at this size")


def _pct(values, q):
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], float)
    return round(float(np.percentile(values, q)), 1) if values.size else None


class _TickLog:
    """A session publisher: per tick, the frame it used and when (wall clock, ms)."""

    def __init__(self):
        self.ticks: dict[int, tuple[int, float, float, float]] = {}
        self.offset = time.time() - time.monotonic()       # monotonic -> wall clock
        self.reports = []

    def __call__(self, session, report) -> None:
        frame = session.last_frame
        now = time.time() * 1e3
        received = (frame.received + self.offset) * 1e3 if frame is not None else float("nan")
        self.ticks[report.tick] = (frame.sequence if frame is not None else -1, received,
                                   now - report.tick_ms, now)
        self.reports.append(report)


def _step_figures(steps, applied, ticks) -> list[dict]:
    applied = np.asarray(applied, float)        # seq, t, x, y, z
    ordered = sorted(ticks.items())
    out = []
    for seq, t0, _ in steps:
        tick = next((t for t, (s, *_) in ordered if s >= seq), None)
        fig = {"latency_ms": None, "motion_latency_ms": None, "breakdown": None}
        if tick is not None:
            later = applied[(applied[:, 0] >= tick) & (applied[:, 1] >= t0)]
            if len(later):
                _, received, started, published = ticks[tick]
                fig["latency_ms"] = later[0, 1] - t0
                fig["breakdown"] = (received - t0, started - received, published - started, later[0, 1] - published)
        before = applied[applied[:, 1] < t0]
        after = applied[(applied[:, 1] >= t0) & (applied[:, 1] < t0 + 800)]
        if len(before) and len(after):
            start = before[-1, 2:]
            direction = after[-1, 2:] - start
            if np.linalg.norm(direction) > 2 * MOVED_MM / 1e3:
                moved = (after[:, 2:] - start) @ (direction / np.linalg.norm(direction))
                hit = np.nonzero(moved >= MOVED_MM / 1e3)[0]
                if hit.size:
                    fig["motion_latency_ms"] = after[hit[0], 1] - t0
        out.append(fig)
    return out


def run(args) -> dict:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-headset-") as config_dir:
        episode = Episode(EpisodeOptions(task=args.task, device="webxr", device_options={
            "host": "127.0.0.1", "port": 0, "config_dir": config_dir}))
        device, session = episode.device, episode.session
        scene = episode.rt.sim
        palm = scene.model.body(scene.model.site(scene.scene.layout.ee_sites["right"]).bodyid).name
        log = _TickLog()
        session.publishers.append(log)
        device.connect()
        loop = RealtimeLoop(session.tick, 1.0 / scene.scene.control_dt, name="bench-headset")
        # Software rendering costs per pixel, and every message waits for the frame being drawn:
        # the window size is part of what is measured (a headset draws on its GPU).
        width, height = (int(v) for v in args.window.lower().split("x"))
        flags = tuple(f for f in FLAGS if not f.startswith("--window-size")) + (f"--window-size={width},{height}",)
        browser = HeadlessChromium(flags=flags)
        try:
            browser.start(device.page_url("127.0.0.1", emulate=True) + f"&render={args.render}")
            browser.wait_for("window.__teleop && __teleop.xr === 'running' && __teleop.framesSent > 10", 60)
            browser.evaluate(INSTRUMENT % palm)
            loop.start()
            session.gate.request(True)
            end = time.monotonic() + 15
            while session.gate.state.value != "engaged" and time.monotonic() < end:
                time.sleep(0.05)
            engaged_from = max(log.ticks) if log.ticks else 0
            time.sleep(args.settle)
            frames0, sent0 = device.stats()["frames"], browser.evaluate("__teleop.framesSent")
            t_start = time.monotonic()
            applied0 = browser.evaluate("__bench.applied.length")
            x = RIGHT_HAND_XR[0]
            for i in range(args.steps):
                dx = args.step_cm / 100 * (1 if i % 2 == 0 else -1)
                x += dx
                browser.evaluate(f"__teleopEmulation.hands.right[0] = {x}; __bench.pending = {dx}; true")
                time.sleep(args.interval)
            seconds = time.monotonic() - t_start
            frames_in = (device.stats()["frames"] - frames0) / seconds
            xr_fps = (browser.evaluate("__teleop.framesSent") - sent0) / seconds
            bench = browser.evaluate("__bench")
        finally:
            loop.stop()
            browser.close()
            device.close()
    steps = _step_figures(bench["steps"], bench["applied"], log.ticks)
    engaged = [r for r in log.reports if r.tick > engaged_from]
    breakdown = np.array([s["breakdown"] for s in steps if s["breakdown"] is not None], float).reshape(-1, 4)
    names = ("page_to_server", "wait_for_tick", "tick", "server_to_page_applied")
    return {
        "task": args.task, "steps": len(steps), "step_cm": args.step_cm, "render": args.render,
        "window": f"{width}x{height}",
        "latency_ms_p50": _pct([s["latency_ms"] for s in steps], 50),
        "latency_ms_p95": _pct([s["latency_ms"] for s in steps], 95),
        "latency_ms_max": _pct([s["latency_ms"] for s in steps], 100),
        "motion_latency_ms_p50": _pct([s["motion_latency_ms"] for s in steps], 50),
        "motion_latency_ms_p95": _pct([s["motion_latency_ms"] for s in steps], 95),
        "breakdown_ms_p50": {n: _pct(breakdown[:, k], 50) for k, n in enumerate(names)},
        # The means add up to the mean latency (the medians need not add up to the median).
        "breakdown_ms_mean": {n: round(float(breakdown[:, k].mean()), 1) if len(breakdown) else None
                              for k, n in enumerate(names)},
        "latency_ms_mean": round(float(breakdown.sum(axis=1).mean()), 1) if len(breakdown) else None,
        "frames_in_per_s": round(frames_in, 1), "xr_frames_per_s": round(xr_fps, 1),
        "poses_out_per_s": round((len(bench["applied"]) - applied0) / seconds, 1),
        "hold_ticks": sum(r.engage_state == "hold" for r in engaged), "engaged_ticks": len(engaged),
        "dropped": device.stats()["dropped"], "late_ticks": loop.late_ticks,
        # 1-minute load average before / after: on a shared machine the figures follow it.
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)], "cpus": os.cpu_count(),
    }
