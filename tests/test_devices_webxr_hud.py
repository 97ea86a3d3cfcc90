"""The in-XR HUD tells the truth, through the real page (headless Chromium + iwer): a dead or
frozen app within ~1 s without any HUD message, holding and why, episode ended, a rejected
pairing code (distinct from a network drop), a second headset refused (and an explicit takeover);
and the HUD never covers the middle of the table when the operator looks down at it."""
from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_devices_webxr import _frame_msg, _tls
from test_devices_webxr_browser import GEOMS
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import devices
from devices.webxr.browser import CHROMIUM, HeadlessChromium
from devices.webxr.server import WEB_ROOT
from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.publish import hud_anchor
from teleop.sim.scene import build_scene
from helpers import wait_for

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() or not (WEB_ROOT / "node_modules/iwer/build").exists(),
    reason="needs Debian's chromium and `npm install` in devices/webxr (make setup does both)")

RUNNING = "window.__teleop && __teleop.xr === 'running' && __teleop.framesSent > 5"
HUD = {"instruction": "Pick up the peach", "recording": True, "engage": "engaged", "status": "engaged",
       "subtasks": [{"name": "grasp peach", "done": False}]}


def _lines(browser) -> dict:
    return browser.evaluate("window.__teleop ? __teleop.hudLines : null")


def _wait_lines(browser, predicate, timeout: float = 10.0) -> tuple[dict, float]:
    """Poll the HUD the page drew until ``predicate(lines)``; (lines, seconds it took)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        lines = _lines(browser)
        if lines and predicate(lines):
            return lines, time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"HUD never matched; last {_lines(browser)}; page {browser.evaluate('__teleop.link')}")


def _banner(lines) -> str:
    return (lines.get("banner") or {}).get("text", "")


def _robot(lines) -> str:
    return (lines.get("robot") or {}).get("text", "")


@pytest.fixture
def headset(tmp_path):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    dev.publish_scene(GEOMS, hud_anchor=hud_anchor(build_scene()))
    dev.publish_hud(HUD)
    browser = HeadlessChromium()
    try:
        browser.start(dev.page_url("127.0.0.1", emulate=True))
        browser.wait_for(RUNNING, 30)
        yield dev, browser
    finally:
        browser.close()
        dev.close()


def test_hud_shows_hold_reason_then_a_frozen_app_a_cut_connection_and_a_closed_one(headset):
    dev, browser = headset
    lines, _ = _wait_lines(browser, lambda hud: _robot(hud).startswith("Engaged") and hud["recording"])
    assert lines["banner"] is None and lines["alert"] is None and not lines["stale"]
    dev.publish_hud({**HUD, "engage": "hold", "reason": "tracking lost: left"})
    lines, _ = _wait_lines(browser, lambda hud: _robot(hud) == "HOLDING: tracking lost: left")
    assert lines["alert"] == "HOLDING: tracking lost: left"          # the head-locked badge too
    assert browser.evaluate("__teleopView.hud.badge.mesh.visible")

    # The app freezes (its loop blocked for 2.5 s): no message says so, the page must notice.
    dev.server._loop.call_soon_threadsafe(time.sleep, 2.5)
    lines, took = _wait_lines(browser, lambda hud: "No data from the app" in _banner(hud))
    assert took < 1.6, took
    assert _robot(lines) == "Robot state unknown" and not lines["recording"] and lines["stale"]
    lines, _ = _wait_lines(browser, lambda hud: hud["banner"] is None)       # it recovers by itself
    assert _robot(lines).startswith("HOLDING")

    # The connection is cut without a close frame (a killed app, a dropped network path).
    dev.server._loop.call_soon_threadsafe(lambda: [c.ws.transport.abort() for c in list(dev.server._clients)])
    lines, took = _wait_lines(browser, lambda hud: "Disconnected from the app" in _banner(hud))
    assert took < 1.0, took
    assert _robot(lines) == "Robot state unknown"
    _wait_lines(browser, lambda hud: hud["banner"] is None)                    # and it reconnects

    dev.close()                                                           # the app goes away
    lines, took = _wait_lines(browser, lambda hud: "Disconnected" in _banner(hud))
    assert took < 1.0, took
    assert "the app closed the headset connection" in _banner(lines)
    assert _robot(lines) == "Robot state unknown" and lines["alert"] == _banner(lines)


def test_wrong_pairing_code_after_a_restart_is_not_a_network_drop(tmp_path):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    port = dev.server.port
    browser = HeadlessChromium()
    restarted = None
    try:
        browser.start(dev.page_url("127.0.0.1"))
        _wait_lines(browser, lambda hud: hud["banner"] is None)
        dev.close()
        # The app restarts on the same port with a new pairing code: the page's code is stale.
        restarted = devices.create_device("webxr", host="127.0.0.1", port=port, config_dir=tmp_path,
                                          new_pairing_code=True)
        restarted.connect()
        lines, _ = _wait_lines(browser, lambda hud: "Pairing code rejected" in _banner(hud))
        assert "Scan the QR code" in _banner(lines) and "certificate" not in _banner(lines)
        assert browser.evaluate("__teleop.link.state") == "rejected"
        assert restarted.stats()["refused"] >= 1 and restarted.stats()["pairing_checks"] >= 1
        restarted.close()                  # now the app is really gone: that is a network drop
        # The HUD snapshot and the link state are read separately: wait for both (no race).
        lines, _ = _wait_lines(browser, lambda hud: browser.evaluate("__teleop.link.state") == "lost"
                               and "Disconnected from the app" in _banner(hud))
        assert "Disconnected from the app" in _banner(lines)
    finally:
        browser.close()
        dev.close()
        if restarted is not None:
            restarted.close()


def test_second_headset_page_is_refused_visibly_and_takes_over_only_explicitly(tmp_path):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    browser = HeadlessChromium()
    url = f"wss://127.0.0.1:{dev.server.port}/ws?code={dev.pairing_code}&client=first-headset"
    try:
        with connect(url, ssl=_tls(), open_timeout=5) as first:
            # A headset reads what the app sends (a client that does not stops answering pings
            # and is, rightly, dropped as dead after ~25 s).
            closed: list[ConnectionClosed] = []
            reader = threading.Thread(target=_drain, args=(first, closed), daemon=True)
            reader.start()
            first.send(json.dumps(_frame_msg(1)))
            browser.start(dev.page_url("127.0.0.1", emulate=True))
            _wait_lines(browser, lambda hud: "Another headset is connected" in _banner(hud), 30)
            assert browser.evaluate("!document.getElementById('takeover').hidden")
            browser.wait_for("__teleop.xr === 'running'", 30)
            time.sleep(0.5)
            stats = dev.stats()
            assert stats["frames"] == 1 and stats["busy"] >= 1 and stats["connects"] == 1, stats
            assert dev.read().frame.sequence == 1               # only the first headset's frames
            browser.evaluate("__teleopTakeOver()")
            reader.join(10)
            assert closed and closed[0].rcvd.code == 4410
        _wait_lines(browser, lambda hud: hud["banner"] is None)
        frames = dev.stats()["frames"]
        assert _wait(lambda: dev.stats()["frames"] > frames + 10)
        assert dev.stats()["takeovers"] == 1
    finally:
        browser.close()
        dev.close()


def _drain(ws, closed: list) -> None:
    try:
        while True:
            ws.recv()
    except ConnectionClosed as exc:
        closed.append(exc)


def _wait(predicate, timeout: float = 10.0) -> bool:
    return wait_for(predicate, timeout)


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Do two convex polygons (n, 2) overlap? Separating-axis test over both polygons' edges."""
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            axis = np.array([-edge[1], edge[0]])
            pa, pb = a @ axis, b @ axis
            if pa.max() < pb.min() or pb.max() < pa.min():
                return False
    return True


def test_hud_never_covers_the_middle_of_the_table_when_looking_down(headset):
    dev, browser = headset
    dev.publish_hud({**HUD, "engage": "hold", "reason": "tracking lost: right"})   # badge shown too
    _wait_lines(browser, lambda hud: hud["alert"] is not None)
    table = build_scene().params.table
    (cx, cy), (hx, hy), top = table.center, table.half_size, table.top_z
    middle = [[cx + sx * hx / 2, cy + sy * hy / 2, top] for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    # Standing at the origin, eyes at 1.6 m, looking down at the table's centre (XR: y up, -z ahead)
    # and at its near and far middle.
    for target_x in (cx, cx - hx / 2, cx + hx / 2):
        pitch = -math.atan2(1.6 - top, target_x)
        browser.evaluate(f"__teleopProbe.emulator().position.set(0, 1.6, 0); "
                         f"__teleopProbe.emulator().quaternion.set({math.sin(pitch / 2)}, 0, 0, {math.cos(pitch / 2)})")
        time.sleep(0.3)                                 # a few XR frames with the new head pose
        centre = browser.evaluate(f"__teleopProbe.project([{target_x}, {cy}, {top}])")
        assert abs(centre[0]) < 0.05 and abs(centre[1]) < 0.05, centre    # we look where we meant
        work = np.array([browser.evaluate(f"__teleopProbe.project({p})")[:2] for p in middle])
        corners = browser.evaluate("__teleopProbe.hudCorners()")
        panel, badge = np.array(corners["panel"])[:, :2], corners["badge"]
        assert badge is not None
        for name, quad in (("panel", panel), ("badge", np.array(badge)[:, :2])):
            assert not _overlap(quad, work), (name, target_x, quad.tolist(), work.tolist())
        if target_x == cx:                              # and the panel is in view, above the work
            assert panel[:, 1].min() > work[:, 1].max() and panel[:, 1].min() < 1.0, panel.tolist()


def test_episode_end_shown_on_the_page_and_the_horizon_counts_from_engage(tmp_path):
    """`teleop record --device webxr` as an operator meets it: the page connects, the operator
    engages 1 s later, the episode runs its --max-seconds from there, the HUD then says it ended."""
    opts = EpisodeOptions(task="pick_up_peach", device="webxr", max_seconds=1.0,
                          device_options={"host": "127.0.0.1", "port": 0, "config_dir": tmp_path})
    episode = Episode(opts)
    browser = HeadlessChromium()

    def on_connect(device) -> None:
        browser.start(device.page_url("127.0.0.1", emulate=True))
        browser.wait_for(RUNNING, 30)
        browser.evaluate("__teleopEmulation.motion = 'hold'")      # no pinch: only the key engages
        threading.Thread(target=press_engage_until_engaged, daemon=True).start()

    def press_engage_until_engaged() -> None:
        """The operator presses the engage key after 1 s, and again while nothing happens (on a
        loaded machine the page's frames can be stale for longer than a press waits)."""
        time.sleep(1.0)
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and (not episode.reports or
                                              episode.reports[-1].engage_state in ("disengaged", "arming")):
            episode.session.gate.request(True)
            time.sleep(2.5)

    try:
        result, _ = episode.run(None, on_connect=on_connect)
        lines, _ = _wait_lines(browser, lambda hud: "Disconnected" in _banner(hud))
        assert _robot(lines).startswith("EPISODE ENDED: not a strict success, progress"), lines
    finally:
        browser.close()
    states = [r.engage_state for r in episode.reports]
    first = next(i for i, s in enumerate(states) if s not in ("disengaged", "arming"))
    assert first >= 15, states[:40]                       # ~1 s waited for the operator
    assert len(episode.reports) - first == 25             # 1.0 s at 25 Hz, counted from engage
    assert result.terminated_by == "horizon" and episode.reports[-1].done
