"""The swing step's keyframes: the grasp point rides the circle about the hinge and reaches the angle."""
import numpy as np
import pytest

from teleop.control.synthetic.motion import Key
from teleop.control.synthetic.planner import Planner
from teleop.control.synthetic.script import parse_script
from teleop.control.synthetic.swing import arc, axis_rotation

ANCHOR, AXIS = np.array([0.7, 0.0, 0.9]), np.array([0.0, 1.0, 0.0])
PART = np.array([0.5, 0.0, 0.92])
TIP = np.array([0.0, 0.02, 0.15])          # fingertip in the palm frame


class FakeQuery:
    def geom(self, name):
        return PART.copy()

    def hinge(self, joint):
        return ANCHOR.copy(), AXIS.copy()


def _swing_keys(angle, turn=1.0):
    start = {s: Key(0.0, np.array([0.3, y, 1.2]), np.eye(3), 1.0, "ready") for s, y in (("left", 0.2), ("right", -0.2))}
    planner = Planner(FakeQuery(), start, lambda *args: TIP)
    script = parse_script({"task": "t", "steps": [{"side": "right", "do": "swing", "part": "p", "joint": "j",
                                                   "angle": angle, "turn": turn, "let_go": False}]}, "t.yaml")
    keys = planner.plan(script)["right"].keys
    # the grasp is made where the fingertip reaches the part; the swing keys follow it
    first = next(i for i, k in enumerate(keys) if np.allclose(k.pos + k.rot @ TIP, PART))
    return keys[first:]


def _angle_about_axis(p):
    v = p - ANCHOR
    return np.arctan2(np.dot(np.cross(PART - ANCHOR, v), AXIS), np.dot(PART - ANCHOR, v))


@pytest.mark.parametrize("angle", [1.8, 0.5])
def test_swing_fingertip_stays_on_the_circle_and_reaches_the_angle(angle):
    keys = _swing_keys(angle)
    radius = np.linalg.norm(PART - ANCHOR)
    tips = [k.pos + k.rot @ TIP for k in keys]
    for tip in tips:
        assert np.linalg.norm(tip - ANCHOR) == pytest.approx(radius, abs=1e-9)
        assert np.dot(tip - ANCHOR, AXIS) == pytest.approx(np.dot(PART - ANCHOR, AXIS), abs=1e-9)
    angles = [_angle_about_axis(t) for t in tips]
    assert max(angles) == pytest.approx(angle, abs=1e-9)
    assert angles[-1] == pytest.approx(angle, abs=1e-9)           # held there (hold, no let go)
    assert all(b >= a - 1e-12 for a, b in zip(angles, angles[1:]))    # always onward, never back


def test_swing_palm_turns_with_the_part():
    keys = _swing_keys(1.2)
    np.testing.assert_allclose(keys[-1].rot, axis_rotation(AXIS, 1.2) @ keys[0].rot, atol=1e-9)


def test_arc_turn_scales_the_palm_rotation_only():
    rot = np.eye(3)
    pos, r = arc(PART, rot, ANCHOR, AXIS, 1.0, turn=0.5)[-1]
    np.testing.assert_allclose(pos, ANCHOR + axis_rotation(AXIS, 1.0) @ (PART - ANCHOR), atol=1e-12)
    np.testing.assert_allclose(r, axis_rotation(AXIS, 0.5), atol=1e-12)


def test_scene_query_finds_a_parts_hinge_and_reads_its_axis():
    import mujoco

    from teleop.control.synthetic.scene_query import SceneQuery

    xml = """<mujoco><worldbody><body name="box" pos="0.6 0 0.8"><geom type="box" size=".1 .1 .05"/>
      <body name="lid" pos="0.1 0 0.05"><joint name="box_joint" type="hinge" axis="0 1 0"/>
        <body name="knob"><geom name="knob_g" type="sphere" size=".01" pos="-0.2 0 0.01"/></body>
      </body></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    q = SceneQuery(model, data)
    assert q.part_hinge("knob_g") == "box_joint"
    anchor, axis = q.hinge("box_joint")
    np.testing.assert_allclose(anchor, [0.7, 0.0, 0.85])
    np.testing.assert_allclose(axis, [0.0, 1.0, 0.0])
