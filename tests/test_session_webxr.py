"""End to end with a real browser: headless Chromium + the iwer WebXR emulator stream hands over
HTTPS / secure websocket into the session; the simulated robot's fingers follow the emulated pinch,
and the page receives the robot's body poses."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from devices.webxr.browser import CHROMIUM, HeadlessChromium
from devices.webxr.server import WEB_ROOT
from teleop.control.episode import Episode, EpisodeOptions

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() or not (WEB_ROOT / "node_modules/iwer/build").exists(),
    reason="needs Debian's chromium and `npm install` in devices/webxr (make setup does both)")


def test_headset_hands_drive_the_robot_fingers(tmp_path):
    opts = EpisodeOptions(task="pick_up_peach", device="webxr",
                          device_options={"host": "127.0.0.1", "port": 0, "config_dir": tmp_path})
    episode = Episode(opts)
    device, session = episode.device, episode.session
    device.connect()
    browser = HeadlessChromium()
    try:
        browser.start(device.page_url("127.0.0.1", emulate=True))
        browser.wait_for("window.__teleop && __teleop.xr === 'running' && __teleop.framesSent > 10", 30)
        session.gate.request(True)                       # the operator presses the engage key
        names = episode.rt.sim.scene.layout.action_joints
        pinch_joints = [names.index(n) for n in ("right_index_mcp_flex", "right_thumb_cmc_flex",
                                                 "left_index_mcp_flex", "left_thumb_cmc_flex")]
        trace, reports = [], []
        end = time.monotonic() + 6.0
        while time.monotonic() < end:                    # 25 Hz, as the real loop runs
            reports.append(session.tick())
            trace.append(episode.rt.sim.joint_positions[pinch_joints])
            time.sleep(0.04)
        poses_acked = device.stats()["last_ack"].get("poses")
        hud = browser.evaluate("__teleop.huds")
    finally:
        browser.close()
        device.close()
    followed = [r for r in reports if r.engage_state in ("easing", "engaged")]
    assert len(followed) > 50, {r.reason for r in reports}
    assert np.median([r.frame_age_ms for r in followed]) < 100
    trace = np.array(trace[len(trace) // 3:])
    swing = trace.max(axis=0) - trace.min(axis=0)
    assert (swing > 0.1).all(), f"fingers did not follow the emulated pinch: swing {swing} rad"
    assert poses_acked is not None and poses_acked[0] > 50   # the page rendered the streamed robot
    assert hud >= 1
