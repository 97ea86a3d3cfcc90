"""``teleop calibrate``: a real glove over ZeroMQ, worn by a person of known proportions, is
calibrated headless; the profile it saves is the person's and ``teleop record --profile`` takes it.
Also the refusals: no frames, a hand untracked, a hold that was not still, an implausible fit."""
from __future__ import annotations

import dataclasses
import itertools
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

from devices.base import Reading
from devices.frame import SIDES, Pose
from devices.glove import GloveLink, packet_to_frame
from devices.glove_protocol import GloveHand, GlovePacket
from devices.handmodel import grasp_angles
from retarget import OperatorProfile
from retarget.profile import POSES
from teleop.cli.commands import calibrate as command
from teleop.cli.main import build_parser, main
from teleop.control import calibration
from teleop.control.calibration import CalibrationError, capture, fit_and_save
from teleop.control.operator_map import DEFAULT_HEAD
from teleop.core.geometry import mat_to_quat

ROOT = Path(__file__).resolve().parents[1]
PERSON = OperatorProfile(name="truth", upper_arm=0.32, forearm=0.29, shoulder_left=(-0.05, 0.19, -0.26),
                         shoulder_right=(-0.05, -0.19, -0.26))


def person_hands(pose: str, rng=None, tremor=0.002, arm=1.0, sides=SIDES, tracker=True) -> dict:
    """What the glove sends for PERSON holding ``pose`` (no head tracker: the default head, facing
    +x), straight arms scaled by ``arm``, palms down, fingers along the arm, with wrist tremor."""
    hands = {}
    for side in sides:
        d = np.asarray(POSES[pose][side], float)
        wrist = DEFAULT_HEAD + PERSON.shoulder(side) + arm * PERSON.arm_length * d
        if rng is not None:
            wrist = wrist + rng.normal(0.0, tremor, 3)
        x = np.array([0.0, 0.0, -1.0])                       # palm frame: x out of the palm (down)
        quat = mat_to_quat(np.column_stack([x, np.cross(d, x), d]))
        hands[side] = GloveHand(grasp_angles(0.1), Pose(wrist, quat) if tracker else None)
    return hands


class Publisher:
    """A glove at 100 Hz in a thread; ``hands(pose, rng)`` is what it sends, switchable live."""

    def __init__(self, hands=person_hands, pose: str = "t_pose"):
        self.link = GloveLink("tcp://127.0.0.1:*", None)
        self.hands, self.pose = hands, pose
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        rng, seq = np.random.default_rng(7), 0
        while not self._stop.is_set():
            self.link.send(seq, seq * 0.01, self.hands(self.pose, rng))
            seq += 1
            time.sleep(0.01)

    def __enter__(self) -> Publisher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self.link.close()


def _calibrate_args(endpoint: str, out: Path, *extra: str) -> list[str]:
    return ["calibrate", "--device", "glove", "--endpoint", endpoint, "--haptics-bind", "tcp://127.0.0.1:*",
            "--hold", "0.5", "--out", str(out), *extra]


def test_calibrate_a_glove_wearer_and_record_with_the_profile(tmp_path, capsys):
    out = tmp_path / "profile.yaml"
    with Publisher() as glove:
        proc = subprocess.Popen([sys.executable, "-m", "teleop", *_calibrate_args(glove.link.endpoint, out, "--json")],
                                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(120.0, proc.kill)      # a hang fails the test instead of blocking the run
        watchdog.start()
        stderr = []
        for line in proc.stderr:               # the operator follows the prompts as they come
            stderr.append(line)
            if line.startswith("Step 2 of 2"):
                glove.pose = "arms_forward"
        stdout = proc.stdout.read()
        watchdog.cancel()
        assert proc.wait(60) == 0, "".join(stderr)
    text = "".join(stderr)
    assert f"glove packets from {glove.link.endpoint}" in text            # the banner
    assert "Step 1 of 2" in text and "capturing in 1" in text              # no terminal: a countdown
    printed = json.loads(stdout)
    profile = OperatorProfile.load(out)
    assert printed["path"] == str(out) and printed["arm_length"] == pytest.approx(profile.arm_length)
    assert profile.name == "profile"
    assert abs(profile.arm_length - PERSON.arm_length) < 0.02
    np.testing.assert_allclose(profile.shoulder_left, PERSON.shoulder_left, atol=0.01)
    np.testing.assert_allclose(profile.shoulder_right, PERSON.shoulder_right, atol=0.01)
    assert 0.12 < profile.hand_length < 0.25                # the glove's hand model, wrist to middle tip

    assert main(["record", "--profile", str(out), "--no-save", "--max-seconds", "1", "--device", "synthetic",
                 "--task", "put_peach_in_fruit_bowl"]) == 0


def test_the_summary_names_every_length_and_the_path(tmp_path, capsys, monkeypatch):
    out = tmp_path / "ana.yaml"
    with Publisher() as glove:
        say = command._say

        def follow(text: str = "", end: str = "\n") -> None:   # the operator hears step 2 (stderr is captured)
            if text.startswith("Step 2 of 2"):
                glove.pose = "arms_forward"
            say(text, end)
        monkeypatch.setattr(command, "_say", follow)
        code = main(_calibrate_args(glove.link.endpoint, out, "--hold", "0.4"))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert re.search(r"profile ana: arm 0\.\d{3} m \(upper arm 0\.\d{3} m, forearm 0\.\d{3} m\), "
                     r"hand 0\.\d{3} m", printed.out)
    assert f"saved {out}" in printed.out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_frames_is_a_clear_error_naming_device_and_endpoint(tmp_path, capsys):
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    code = main(_calibrate_args(endpoint, tmp_path / "p.yaml", "--wait", "0.5"))
    err = capsys.readouterr().err
    assert code == 2
    assert re.search(r"teleop: error: glove: no frames within 0\.5 s \(glove packets from " + re.escape(endpoint),
                     err), err
    assert not (tmp_path / "p.yaml").exists()


@pytest.mark.parametrize("hands, message", [
    (lambda pose, rng: person_hands(pose, rng, sides=("left",)), "the right hand is not tracked"),
    (lambda pose, rng: person_hands(pose, rng, tracker=False), "the left wrist is not tracked"),
])
def test_an_untracked_hand_is_refused(tmp_path, capsys, hands, message):
    with Publisher(hands) as glove:
        code = main(_calibrate_args(glove.link.endpoint, tmp_path / "p.yaml"))
    err = capsys.readouterr().err
    assert code == 2 and f"teleop: error: {message}" in err, err
    assert not (tmp_path / "p.yaml").exists()


def test_an_existing_profile_is_kept_without_yes(tmp_path, capsys):
    out = tmp_path / "p.yaml"
    out.write_text("name: p\n")
    assert main(_calibrate_args("tcp://127.0.0.1:1", out)) == 2
    assert "pass --yes to overwrite" in capsys.readouterr().err
    assert out.read_text() == "name: p\n"


def test_record_help_points_at_a_command_that_exists():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices      # argparse keeps them nowhere public
    assert "teleop calibrate" in commands["record"].format_help()
    assert "calibrate" in commands
    calibrate_help = commands["calibrate"].format_help()
    for flag in ("--device", "--out", "--hold", "--yes", "--json", "--endpoint", "--haptics-bind", "--port"):
        assert flag in calibrate_help
    assert "{glove,webxr}" in calibrate_help                 # players need a task: not offered


# -- the maths, on frames made without sockets ------------------------------------------------------

class FakeGlove:
    """``read()`` gives a new frame of ``hands(pose)`` at every call, like a fast device."""

    def __init__(self, hands):
        self.hands, self.index = hands, 0

    def read(self) -> Reading:
        self.index += 1
        packet = GlovePacket(self.index, self.index * 0.01, False, self.hands(self.index))
        return Reading(packet_to_frame(packet, time.monotonic()), 0.0, False, self.index)


def test_capture_averages_the_hold_and_the_fit_recovers_the_person(tmp_path):
    rng = np.random.default_rng(3)
    samples = [capture(FakeGlove(lambda i, pose=pose: person_hands(pose, rng, tremor=0.005)), pose, 0.1,
                       clock=_step_clock(), poll=0.0) for pose in ("t_pose", "arms_forward")]
    profile = fit_and_save(samples, tmp_path / "sub" / "bo.yaml")
    assert profile.name == "bo" and OperatorProfile.load(tmp_path / "sub" / "bo.yaml") == profile
    assert profile.arm_length == pytest.approx(PERSON.arm_length, abs=0.005)   # averaged: tighter than tremor


def _step_clock(step_s: float = 0.002):
    """A clock that advances ``step_s`` per reading: the hold sees the same frames however loaded
    the machine is (with the wall clock, a busy machine gave a 50 ms hold too few frames)."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def test_a_hold_that_moves_is_refused():
    moving = FakeGlove(lambda i: person_hands("t_pose", arm=0.7 + 0.3 * (i % 2)))
    with pytest.raises(CalibrationError, match=r"hold still: the left wrist moved \d+\.\d cm"):
        capture(moving, "t_pose", 0.05, clock=_step_clock(), poll=0.0)


@pytest.mark.parametrize("arm, message", [(0.3, "arm length 0.1"), (1.0, None)])
def test_an_implausible_fit_is_refused(tmp_path, arm, message):
    samples = [calibration.average(pose, [calibration.sample_from_frame(pose, FakeGlove(
        lambda i, pose=pose: person_hands(pose, arm=arm)).read().frame)]) for pose in ("t_pose", "arms_forward")]
    if message is None:
        fit_and_save(samples, tmp_path / "ok.yaml")
        bent = dataclasses.replace(samples[1], wrists={s: w - [0.3, 0.0, 0.0] for s, w in samples[1].wrists.items()})
        with pytest.raises(CalibrationError, match="implausible fit: the wrists are .* from straight arms"):
            fit_and_save([samples[0], bent], tmp_path / "bent.yaml")
    else:
        with pytest.raises(CalibrationError, match=f"implausible fit: {message}"):
            fit_and_save(samples, tmp_path / "short.yaml")


def test_the_window_wizard_uses_the_same_maths(qtbot, tmp_path):
    from ui.calibration import CalibrationWizard
    pose = {"now": "t_pose"}
    glove = FakeGlove(lambda i: person_hands(pose["now"], tracker=i > 1))     # the first frame: no tracker
    wizard = CalibrationWizard(lambda: glove.read().frame, tmp_path / "w.yaml")
    qtbot.addWidget(wizard)
    assert wizard.prompt.text().startswith("Step 1 of 2: Stand straight")
    wizard.capture()
    assert "Not captured: the left wrist is not tracked" in wizard.result.text()
    wizard.capture()
    pose["now"] = "arms_forward"
    wizard.capture()
    assert wizard.profile is not None and OperatorProfile.load(tmp_path / "w.yaml") == wizard.profile
    assert wizard.profile.arm_length == pytest.approx(PERSON.arm_length, abs=1e-3)
