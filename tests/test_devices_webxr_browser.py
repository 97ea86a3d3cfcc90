"""The real thing: Debian's headless Chromium + the iwer WebXR emulator against the headset server.

The page loads over HTTPS, enters an immersive session with emulated hand tracking, streams
hands (parsed into OperatorFrames here), renders body poses the server streams (and acks them),
and survives a server-side disconnect mid-session without leaving XR.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import devices
from devices.webxr.browser import CHROMIUM, HeadlessChromium
from devices.webxr.server import WEB_ROOT
from teleop.core.geometry import quat_to_mat
from helpers import wait_for

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() or not (WEB_ROOT / "node_modules/iwer/build").exists(),
    reason="needs Debian's chromium and `npm install` in devices/webxr (make setup does both)")

GEOMS = [{"name": "table", "body": "world", "type": "box", "size": [0.35, 0.55, 0.02],
          "rgba": [0.6, 0.5, 0.4, 1], "pos": [0.55, 0, 0.76]},
         {"name": "cube", "body": "cube", "type": "box", "size": [0.03, 0.03, 0.03], "rgba": [1, 0, 0, 1]},
         {"name": "post", "body": "cube", "type": "capsule", "size": [0.01, 0.05, 0], "pos": [0, 0, 0.08]}]


def _wait(predicate, timeout: float = 10.0) -> bool:
    return wait_for(predicate, timeout)


def _check_hand(hand, side: str) -> None:
    assert hand is not None and hand.tracked.all() and hand.wrist_tracked
    local = (hand.keypoints - hand.wrist.position) @ quat_to_mat(hand.wrist.quat)
    assert 0.12 < np.linalg.norm(local[12]) < 0.25          # wrist to middle tip: a human hand
    assert local[12, 2] > 0.1                                # fingers along the palm frame's z
    thumb_side = 1.0 if side == "right" else -1.0            # y toward the thumb on a right hand
    assert thumb_side * local[5, 1] > 0.005                  # index knuckle on the thumb side
    assert 0.5 < hand.wrist.position[2] < 2.0                # hands at a standing height (z up)


@pytest.fixture
def session(tmp_path):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    dev.publish_scene(GEOMS)
    dev.publish_hud({"instruction": "Pick up the cube", "recording": True,
                     "subtasks": [{"name": "grasp cube", "done": False}, {"name": "lift", "done": True}]})
    browser = HeadlessChromium()
    try:
        browser.start(dev.page_url("127.0.0.1", emulate=True))
        yield dev, browser
    finally:
        browser.close()
        dev.close()


def _publish_until_acked(dev, browser, z: float, seq: int) -> None:
    assert _wait(lambda: (dev.publish_poses({"cube": [0.5, 0.1, z, 1, 0, 0, 0]}, seq=seq),
                          dev.stats()["last_ack"].get("poses") == (seq, 1))[1], 10.0)
    assert abs(browser.evaluate("__teleopView.bodies.get('cube').position.z") - z) < 1e-6


def test_browser_streams_hands_renders_poses_and_reconnects(session):
    dev, browser = session
    browser.wait_for("window.__teleop && __teleop.xr === 'running' && __teleop.framesSent > 10", 30)
    state = browser.evaluate("__teleop")
    assert state["emulated"] and state["mode"] in ("immersive-ar", "immersive-vr")
    assert state["geoms"] == 3 and state["huds"] == 1 and not state["errors"]
    assert _wait(lambda: dev.read().frame is not None and not dev.read().stale)
    frame = dev.read().frame
    assert frame.device == "webxr" and frame.head is not None
    assert 1.0 < frame.head.position[2] < 2.2                # head height, z up
    for side in ("left", "right"):
        _check_hand(frame.hand(side), side)
    assert frame.left.wrist.position[1] > frame.right.wrist.position[1]   # left hand on the left
    assert frame.hand("right").raw.shape == (25, 7)
    _publish_until_acked(dev, browser, 0.85, seq=1)

    frames_before = dev.stats()["frames"]
    dev.server.disconnect_clients()                          # network drop mid-session
    browser.wait_for("__teleop.connects === 2 && __teleop.ws === 'open'", 15)
    assert browser.evaluate("__teleop.xr") == "running"      # the XR session was not restarted
    assert _wait(lambda: dev.stats()["frames"] > frames_before + 10)
    assert browser.evaluate("__teleop.scenes") == 2          # scene and HUD re-sent on reconnect
    _publish_until_acked(dev, browser, 0.9, seq=2)
    assert dev.stats()["connects"] == 2 and dev.stats()["dropped"] == {}


REVIEW_HUD = {"instruction": "Pick up the cube", "mode": "REVIEW", "elapsed_s": 3.0, "remaining_s": 5.0,
              "accepted": 2, "target": 10,
              "buttons": [{"label": "Accept", "name": "accept"}, {"label": "Reject…", "name": "reject"}]}


def _pinch_midpoint(browser):
    """Where the emulated right hand's thumb and index tips meet, once the page has streamed them."""
    tips = browser.wait_for("__teleop.tips.right", 5)
    return (np.array(tips[0]) + np.array(tips[1])) / 2


def test_pinching_a_hud_button_sends_its_action_once(session):
    """iwer's hand poses: the right hand moved onto the Accept button and pinched there presses it
    once (held, it does not repeat); pinches elsewhere press nothing; the HUD shows the mode line."""
    dev, browser = session
    dev.publish_hud(REVIEW_HUD)
    browser.wait_for("window.__teleopProbe && __teleop.xr === 'running' && __teleopProbe.buttons().length === 2",
                     30)
    assert browser.evaluate("__teleop.hudLines.mode") == "REVIEW · 3 s · 5 s left · accepted 2/10"
    browser.evaluate("__teleopEmulation.motion = 'hold'; __teleopEmulation.pinch.right = 1")
    time.sleep(0.5)                                          # a few frames at the closed pose
    hand = np.array(browser.evaluate("__teleopEmulation.hands.right"))
    offset = _pinch_midpoint(browser) - hand                 # closed-pinch midpoint from the hand
    assert browser.evaluate("__teleop.presses") == []        # pinching away from the buttons
    browser.evaluate("__teleopEmulation.pinch.right = 0")
    centre = np.array(browser.evaluate("__teleopProbe.buttons()[0].centre"))
    target = (centre - offset).round(4).tolist()
    browser.evaluate(f"__teleopEmulation.hands.right = {target}")
    time.sleep(0.5)
    assert browser.evaluate("__teleop.presses") == []        # an open hand on the button presses nothing
    browser.evaluate("__teleopEmulation.pinch.right = 1")
    browser.wait_for("__teleop.presses.length === 1", 10)
    assert browser.evaluate("__teleop.buttonHover") == 0     # the pinched button is lit
    time.sleep(1.0)                                          # held: still one press
    assert browser.evaluate("__teleop.presses") == ["accept"]
    assert _wait(lambda: dev.stats()["actions"] == 1)
    assert dev.take_actions() == [("accept", None)] and dev.take_actions() == []
    assert dev.stats()["dropped"] == {}
