"""The operator actions devices may send are the flow's, and what the HUD carries of the flow:
mode, elapsed and remaining time, accepted / target and the buttons that apply in each mode."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from devices.webxr.scene_msgs import hud_message
from teleop.control.publish import hud_state
from teleop.core.conventions import OPERATOR_ACTIONS
from teleop.core.errors import ConfigError
from ui.flow import FlowController
from ui.hud_flow import buttons, flow_hud
from ui.record_panel import REJECT_REASONS


def test_every_operator_action_is_a_flow_action():
    for name in OPERATOR_ACTIONS:
        assert callable(getattr(FlowController, f"_on_{name}", None)), name


def _snap(**kw):
    return SimpleNamespace(**{"elapsed_s": 0.0, "remaining_s": None, "connected": True, **kw})


def test_hud_carries_mode_times_count_and_buttons():
    report = SimpleNamespace(instruction="Pick up the peach", progress=40.0, engage_state="engaged", reason="",
                             latched=[True, False], done=False, strict_success=False)
    flow = flow_hud("RECORDING", _snap(elapsed_s=12.7, remaining_s=47.2), None, 3, 100)
    hud = {**hud_state(report, ["grasp", "lift"], True), **flow}
    msg = json.loads(hud_message(hud))
    assert (msg["mode"], msg["elapsed_s"], msg["remaining_s"], msg["accepted"], msg["target"]) == \
        ("RECORDING", 12.0, 48.0, 3, 100)
    assert [(b["name"], b["label"]) for b in msg["buttons"]] == [("record", "Stop"), ("rerecord", "Re-record")]
    assert msg["recording"] and msg["subtasks"][0] == {"name": "grasp", "done": True}
    bare = json.loads(hud_message(hud_state(report, ["grasp", "lift"], False)))     # a headless recorder
    assert bare["mode"] == "" and bare["buttons"] == [] and bare["remaining_s"] is None


def test_review_hud_shows_the_replay_position():
    review = SimpleNamespace(take=SimpleNamespace(meta=SimpleNamespace(control_hz=25.0), length=250), tick=60)
    flow = flow_hud("REVIEW", _snap(), review, 0, 10)
    assert (flow["elapsed_s"], flow["remaining_s"]) == (2.0, 8.0)


def test_buttons_per_mode():
    names = lambda *a: [(b["name"], b["arg"]) for b in buttons(*a)]   # noqa: E731
    assert names("LIVE", True, False, False) == [("record", None)]
    assert names("LIVE", False, False, True) == [("undo", None)]               # nothing to record with
    assert names("STARTING", True, False, False) == names("FINISHING", True, False, False) == []
    assert names("REVIEW", True, False, False) == [("accept", None), ("reject", None), ("rerecord", None)]
    rejecting = buttons("REVIEW", True, True, False)
    assert [b["label"] for b in rejecting] == [*REJECT_REASONS, "Back"]
    assert [b["arg"] for b in rejecting[:-1]] == list(range(1, len(REJECT_REASONS) + 1))
    for mode in ("LIVE", "RECORDING", "REVIEW"):
        for b in buttons(mode, True, mode == "REVIEW", True):
            assert b["name"] in OPERATOR_ACTIONS


def test_a_hud_button_of_no_operator_action_is_refused():
    with pytest.raises(ConfigError, match="action 'fly'; valid: 'record'"):
        hud_message({"buttons": [{"label": "Fly", "name": "fly"}]})
