"""Engage gate: nothing moves before engage, pinch timing, no jumps, clutch re-anchor, dropout hold."""
from __future__ import annotations

import numpy as np
import pytest

from devices.base import Reading
from devices.engage import EngageConfig, EngageGate, EngageState
from devices.frame import HandFrame, OperatorFrame, Pose
from devices.handmodel import PALM_DOWN, grasp_angles, world_nodes

DT = 0.04        # 25 Hz control


def _hand(pos, pinch=False, wrist_tracked=True, tracked_nodes=21) -> HandFrame:
    wrist = Pose(np.asarray(pos, float), PALM_DOWN)
    nodes = world_nodes(grasp_angles(0.3), "right", wrist)
    if pinch:
        nodes[4] = nodes[8] + [0.005, 0, 0]
    tracked = np.arange(21) < tracked_nodes
    return HandFrame(wrist, nodes, tracked, wrist_tracked)


def _reading(t, right=(0.4, -0.2, 1.1), left=(0.4, 0.2, 1.1), pinch=False, engage=False, stale=False,
             **hand_kw) -> Reading:
    frame = OperatorFrame(t, t, int(t * 100), _hand(left), _hand(right, pinch, **hand_kw),
                          engage=engage, device="test")
    return Reading(frame, 0.3 if stale else 0.01, stale)


def _run_ticks(gate, readings, target, q):
    """Feed readings; returns the list of joint outputs (the action fed back as current)."""
    out = []
    for i, reading in enumerate(readings):
        decision = gate.observe(reading, i * DT)
        q = gate.command(target if decision.follow else None, q, DT)
        out.append(q.copy())
    return out


def test_nothing_moves_until_engaged():
    gate, q, target = EngageGate(), np.zeros(58), np.full(58, 0.5)
    outs = _run_ticks(gate, [_reading(i * DT) for i in range(25)], target, q)
    assert all(np.array_equal(o, q) for o in outs)
    assert gate.state is EngageState.DISENGAGED


def test_pinch_must_be_held_for_the_configured_time():
    gate = EngageGate(EngageConfig(pinch_hold_s=0.3))
    states = [gate.observe(_reading(i * DT, pinch=True), i * DT).state for i in range(10)]
    first_follow = states.index(EngageState.EASING)
    assert all(s is EngageState.ARMING for s in states[:first_follow])
    assert first_follow * DT == pytest.approx(0.32, abs=DT / 2)      # >= 0.3 s, on the next tick
    gate2 = EngageGate()
    pattern = [True] * 5 + [False] + [True] * 5          # released in between: the timer restarts
    states2 = [gate2.observe(_reading(i * DT, pinch=p), i * DT).state for i, p in enumerate(pattern)]
    assert EngageState.EASING not in states2


def test_engage_eases_in_without_jumps_then_follows():
    cfg = EngageConfig(ease_velocity=0.6, follow_velocity=4.0)
    gate, q, target = EngageGate(cfg), np.zeros(58), np.linspace(-1.0, 1.0, 58)
    gate.request(True)
    outs = _run_ticks(gate, [_reading(i * DT) for i in range(100)], target, q)
    steps = np.abs(np.diff(np.vstack([q, *outs]), axis=0))
    assert steps.max() <= cfg.ease_velocity * DT + 1e-12              # bounded velocity: no jump
    assert gate.state is EngageState.ENGAGED
    np.testing.assert_allclose(outs[-1], target, atol=1e-12)
    assert len([o for o in outs if not np.allclose(o, target)]) >= 1.0 / (0.6 * DT) - 1


def test_clutch_reanchors_on_engage_so_the_hand_continues_where_it_was():
    gate = EngageGate()
    gate.request(True)
    d = gate.observe(_reading(0.0, right=(0.4, -0.2, 1.1)), 0.0)
    assert d.follow and d.anchored
    np.testing.assert_allclose(d.frame.right.wrist.position, [0.4, -0.2, 1.1])   # first engage: absolute
    d = gate.observe(_reading(DT, right=(0.5, -0.2, 1.1)), DT)
    gate.request(False)
    assert not gate.observe(_reading(2 * DT, right=(0.5, -0.2, 1.1)), 2 * DT).follow
    # The operator moves 30 cm while disengaged, then re-engages: nothing jumps.
    gate.request(True)
    d = gate.observe(_reading(3 * DT, right=(0.5, 0.1, 1.1)), 3 * DT)
    np.testing.assert_allclose(d.frame.right.wrist.position, [0.5, -0.2, 1.1], atol=1e-12)
    np.testing.assert_allclose(d.frame.right.keypoints[0], [0.5, -0.2, 1.1], atol=1e-12)
    d = gate.observe(_reading(4 * DT, right=(0.55, 0.1, 1.1)), 4 * DT)
    np.testing.assert_allclose(d.frame.right.wrist.position, [0.55, -0.2, 1.1], atol=1e-12)   # relative


def test_engage_anchors_onto_the_robot_wrists_when_given():
    gate = EngageGate()
    gate.request(True)
    robot = {"left": np.array([0.3, 0.25, 1.0]), "right": np.array([0.3, -0.25, 1.0])}
    d = gate.observe(_reading(0.0), 0.0, robot_wrists=robot)
    for side in ("left", "right"):
        np.testing.assert_allclose(d.frame.hand(side).wrist.position, robot[side], atol=1e-12)


@pytest.mark.parametrize("bad, reason, per_side", [
    (dict(stale=True), "stale", True),
    (dict(wrist_tracked=False), "tracking lost: right", False),     # hold_per_side off: both hold
    (dict(tracked_nodes=10), "tracking lost: right", False),
])
def test_dropout_holds_marks_ticks_and_eases_back(bad, reason, per_side):
    cfg = EngageConfig(ease_velocity=0.5, hold_per_side=per_side)
    gate, q = EngageGate(cfg), np.zeros(58)
    gate.request(True)
    q = _run_ticks(gate, [_reading(i * DT) for i in range(5)], np.full(58, 0.05), q)[-1]
    assert gate.state is EngageState.ENGAGED
    held = q.copy()
    for i in range(5, 10):
        d = gate.observe(_reading(i * DT, **bad), i * DT)
        assert d.state is EngageState.HOLD and d.marked and not d.follow and reason in d.reason
        q = gate.command(None, q, DT)
        np.testing.assert_array_equal(q, held)
    far = np.full(58, 1.0)                     # the hand moved a lot during the dropout
    d = gate.observe(_reading(10 * DT), 10 * DT)
    assert d.state is EngageState.EASING and d.follow and not d.marked
    q2 = gate.command(far, q, DT)
    assert np.max(np.abs(q2 - q)) <= cfg.ease_velocity * DT + 1e-12


def test_device_flag_edges_and_no_engage_onto_stale_frames():
    gate = EngageGate()
    assert gate.observe(_reading(0.0, engage=True, stale=True), 0.0).state is EngageState.DISENGAGED
    assert gate.observe(_reading(DT, engage=True), DT).follow                 # rising edge engages
    assert gate.observe(_reading(2 * DT, engage=True), 2 * DT).follow
    assert not gate.observe(_reading(3 * DT, engage=False), 3 * DT).follow    # falling edge
    gate.request(True)
    assert not gate.observe(Reading(None, float("inf"), True), 4 * DT).follow  # nothing to engage onto


def test_pinch_held_through_disengage_does_not_reengage_until_released():
    gate = EngageGate(EngageConfig(pinch_hold_s=0.08))
    t = [i * DT for i in range(20)]
    assert [gate.observe(_reading(x, pinch=True), x).follow for x in t[:4]][-1]
    gate.request(False)
    assert not any(gate.observe(_reading(x, pinch=True), x).follow for x in t[4:10])
    gate.observe(_reading(t[10]), t[10])                                      # released
    assert [gate.observe(_reading(x, pinch=True), x).follow for x in t[11:15]][-1]



# Action layout of the session: left arm 0-6, right arm 7-13, left hand 14-35, right hand 36-57.
SIDE_JOINTS = {"left": np.r_[0:7, 14:36], "right": np.r_[7:14, 36:58]}
ARM_JOINTS = {"left": np.arange(0, 7), "right": np.arange(7, 14)}


@pytest.mark.parametrize("bad", [dict(wrist_tracked=False), dict(tracked_nodes=10)])
def test_one_hand_lost_holds_that_side_only(bad):
    """Losing one hand used to freeze both arms. Now its side holds, the other keeps following,
    the tick is marked and says which side."""
    gate, q = EngageGate(EngageConfig(ease_velocity=0.5), side_joints=SIDE_JOINTS), np.zeros(58)
    gate.request(True)
    q = _run_ticks(gate, [_reading(i * DT) for i in range(5)], np.full(58, 0.05), q)[-1]
    assert gate.state is EngageState.ENGAGED
    held = q.copy()
    for i in range(5, 10):
        d = gate.observe(_reading(i * DT, **bad), i * DT)
        assert d.follow and d.marked and d.held_sides == ("right",) and "tracking lost: right" in d.reason
        assert d.frame.right is None and d.frame.left is not None      # the retargeter holds that side
        q = gate.command(np.full(58, 0.05 + 0.01 * i), q, DT)
        np.testing.assert_array_equal(q[SIDE_JOINTS["right"]], held[SIDE_JOINTS["right"]])
        np.testing.assert_allclose(q[SIDE_JOINTS["left"]], 0.05 + 0.01 * i)
    d = gate.observe(_reading(10 * DT), 10 * DT)                      # the hand is back: it eases
    assert d.follow and not d.marked and d.held_sides == () and gate.easing_sides == {"right"}
    q2 = gate.command(np.full(58, 1.0), q, DT)
    assert np.max(np.abs(q2 - q)[SIDE_JOINTS["right"]]) <= 0.5 * DT + 1e-12
    both = EngageGate(EngageConfig(), side_joints=SIDE_JOINTS)
    both.request(True)
    both.observe(_reading(0.0, wrist_tracked=False, tracked_nodes=0), 0.0)
    d = both.observe(Reading(OperatorFrame(DT, DT, 1, None, None, device="test"), 0.01, False), DT)
    assert d.state is EngageState.HOLD and not d.follow                # no hand at all: everything holds


def test_a_returning_hand_glides_in_from_the_robot_wrist_at_the_ease_speed():
    """On return the target starts at the robot's wrist and moves to the operator's hand at
    ease_speed (operator frame), instead of jumping there."""
    cfg = EngageConfig(ease_speed=0.1)
    gate = EngageGate(cfg, side_joints=SIDE_JOINTS)
    gate.request(True)
    robot = {"left": np.array([0.4, 0.2, 1.1]), "right": np.array([0.4, -0.2, 1.1])}
    gate.observe(_reading(0.0), 0.0, robot_wrists=robot)
    gate.observe(_reading(DT, wrist_tracked=False), DT, robot_wrists=robot)       # right lost
    # the hand comes back 30 cm from where it was lost, the robot's wrist still where it held
    path = []
    for i in range(2, 90):                     # 0.3 m at 0.1 m/s: 75 ticks
        d = gate.observe(_reading(i * DT, right=(0.4, -0.5, 1.1)), i * DT, robot_wrists=robot)
        path.append(d.frame.right.wrist.position.copy())
    path = np.array(path)
    np.testing.assert_allclose(path[0], robot["right"], atol=1e-12)             # starts at the robot
    steps = np.linalg.norm(np.diff(path, axis=0), axis=1)
    assert steps.max() <= cfg.ease_speed * DT + 1e-12                            # glides at ease_speed
    np.testing.assert_allclose(path[-1], [0.4, -0.5, 1.1], atol=1e-12)           # then follows the hand
    np.testing.assert_allclose(d.frame.right.keypoints[0], path[-1], atol=1e-12)


def test_easing_joint_steps_keep_the_wrist_below_the_cartesian_speed():
    """The guarantee under the glide: while easing, each side's arm step is scaled so its wrist
    (given by wrist_positions) moves at most ease_wrist_speed * dt, however the joints are ordered."""
    lever = np.linspace(0.1, 0.9, 7)

    def wrists(q):          # a stand-in FK: wrist offsets linear in the joints, 0.9 m lever at most
        return {"left": np.array([lever @ q[0:7], 0.0, 0.0]), "right": np.array([lever @ q[7:14], 0.0, 0.0])}

    cfg = EngageConfig(ease_velocity=1.0, ease_wrist_speed=0.3)
    gate = EngageGate(cfg, side_joints=SIDE_JOINTS, wrist_positions=wrists, arm_joints=ARM_JOINTS)
    gate.request(True)
    q, target = np.zeros(58), np.full(58, 1.0)
    for i in range(60):
        d = gate.observe(_reading(i * DT), i * DT)
        q_new = gate.command(target if d.follow else None, q, DT)
        for side in ("left", "right"):
            assert np.linalg.norm(wrists(q_new)[side] - wrists(q)[side]) <= 0.3 * DT + 1e-9
        q = q_new
    assert np.abs(q[14:] - 1.0).max() < 1e-9            # the hands themselves eased in joint space


def test_an_engage_key_pressed_while_frames_are_stale_waits_briefly_for_a_fresh_one():
    gate = EngageGate(EngageConfig(request_wait_s=1.0))
    gate.request(True)
    for i in range(10):                                       # 0.4 s of stale frames: not engaged, still waiting
        assert not gate.observe(_reading(i * DT, stale=True), i * DT).follow
    assert gate.observe(_reading(10 * DT), 10 * DT).follow    # the first fresh frame engages
    late = EngageGate(EngageConfig(request_wait_s=1.0))
    late.request(True)
    for i in range(30):                                       # 1.2 s stale: the press has expired
        late.observe(_reading(i * DT, stale=True), i * DT)
    assert not late.observe(_reading(30 * DT), 30 * DT).follow
    assert late.state is EngageState.DISENGAGED
