"""The closed-loop synthetic operator: steps planned from live poses, failed grasps retried, slips
re-grasped, a deterministic lock-step stream, and a real-time stream that never reads the sim's data."""
import dataclasses

import mujoco
import numpy as np

from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.synthetic.closed_loop import BACK_OFF, BACKOFF_M, MAX_GRASP_TRIES, LiveStream
from teleop.control.synthetic.operator import live_episode
from teleop.control.synthetic.planner import SETTLE_S

TASK = "put_peach_in_fruit_bowl"          # grasp peach (right hand), place in the bowl, rest
OBJECT = "peach"


def _episode(**options) -> Episode:
    return Episode(EpisodeOptions(task=TASK, device="synthetic", episode_index=0,
                                  device_options={"dropout_per_s": 0.0}, **options))


def _stream(ep: Episode) -> LiveStream:
    return ep.device.stream.__self__


def _teleport(ep: Episode, name: str, shift) -> None:
    """Move a free body in the sim's MjData (as a hand that bumped it would), at rest."""
    model, data = ep.rt.sim.scene.model, ep.rt.sim.data
    joint = model.body(name).jntadr[0]
    adr, dof = model.jnt_qposadr[joint], model.jnt_dofadr[joint]
    data.qpos[adr:adr + 3] += shift
    data.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(model, data)


def _grasp_keys(stream: LiveStream, side: str = "right") -> np.ndarray:
    return np.array([k.pos for k in stream.planner.sides[side].keys])


def test_a_step_is_planned_from_where_the_object_is_when_it_begins():
    shift = np.array([0.03, 0.06, 0.0])
    planned = {}
    for moved in (False, True):
        ep = _episode()
        stream = _stream(ep)
        assert len(stream.planner.sides["right"].keys) == 2            # nothing planned before it begins
        if moved:
            _teleport(ep, OBJECT, shift)                               # after the reset, before the step
        stream.advance(SETTLE_S)
        assert stream.active["right"] is not None and stream.active["right"].step.do == "grasp"
        planned[moved] = _grasp_keys(stream)
    # Every key of the grasp (approach, descend, close, lift) follows the object.
    np.testing.assert_allclose(planned[True][2:] - planned[False][2:], np.broadcast_to(shift, planned[True][2:].shape),
                               atol=1e-6)


def test_a_grasp_that_lifts_nothing_is_detected_and_retried_then_carried_on():
    ep = _episode()
    stream = _stream(ep)
    stream.advance(SETTLE_S)
    for attempt in range(1, MAX_GRASP_TRIES + 1):     # no physics: the object never rises (as if welded)
        assert stream.active["right"].step.do == "grasp" and stream.active["right"].tries == attempt
        stream.advance(stream.planner.sides["right"].t + 1e-3)
        assert not stream.checks[-1][2].held
        if attempt < MAX_GRASP_TRIES:                 # opens and backs off, then reaches again
            assert stream.active["right"].step is BACK_OFF
            stream.advance(stream.planner.sides["right"].t + 1e-3)
    assert len(stream.checks) == MAX_GRASP_TRIES
    assert stream.active["right"].step.do == "place"  # out of tries: the script carries on
    # Each retry opened the hand and backed off upward before reaching again.
    keys = stream.planner.sides["right"].keys
    ups = [b.pos[2] - a.pos[2] for a, b in zip(keys, keys[1:]) if a.grip == 1.0 and a.grasp == "release"]
    assert sum(np.isclose(u, BACKOFF_M) for u in ups) >= MAX_GRASP_TRIES - 1      # (+ the place's retreat)


def _held_after_grasp(ep: Episode, stream: LiveStream) -> None:
    """Finish the grasp with the object where a held one would be (kinematically, no physics)."""
    stream.advance(SETTLE_S)
    q, side = stream.planner.q, "right"
    offset = stream.planner._held[side][1]
    palm = q.site(stream.palm_sites[side])
    _teleport(ep, OBJECT, palm + offset - q.position(OBJECT))
    stream.advance(stream.planner.sides[side].t + 1e-3)


def test_a_slip_while_carrying_is_detected_and_the_object_grasped_again():
    ep = _episode()
    stream = _stream(ep)
    _held_after_grasp(ep, stream)
    assert stream.checks[-1][2].held and "right" in stream.carrying
    assert stream.active["right"].step.do == "place"
    t = stream.planner.sides["right"].keys[-1].t - 3.0           # mid-carry, before the let-go
    stream.advance(t - 1.0)
    assert not stream.slips                                       # still held: no slip
    _teleport(ep, OBJECT, [0.0, 0.0, -0.15])                      # it drops out of the hand
    stream.advance(t)
    assert stream.slips and stream.slips[-1][1] == "right"
    # It lets go and backs off, then grasps again and only then places.
    assert stream.active["right"].step is BACK_OFF
    assert [i.step.do for i in stream.queues["right"]][:2] == ["grasp", "place"]
    assert stream.planner.sides["right"].keys[-1].pos[2] > stream.timelines["right"].sample(t)[0][2]


def test_a_place_with_landed_r_is_found_past_moves_and_counts_only_its_target_centre():
    """``landed_r`` on a place (opt-in): after a slip, a re-grasp whose object already lies within
    that distance of the target's centre is dropped with the carry's moves and the place; one that
    lies inside the target's bounds but farther out is grasped again. Without it a move between the
    grasp and the place keeps the re-grasp (as before)."""
    from teleop.control.synthetic.closed_loop import Item
    from teleop.control.synthetic.script import Step

    def queue_after_slip(stream, place_args):
        grasp = stream.active["right"]                    # the peach's grasp, begun
        place = Step("place", "right", {"target": "fruit_bowl", **place_args})
        stream.queues["right"].clear()
        stream.queues["right"].extend([Item(grasp.index, grasp.step, after_slip=True),
                                       Item(grasp.index + 1, Step("move", "right", {"offset": [0.0, 0.0, 0.05]})),
                                       Item(grasp.index + 2, place), Item(grasp.index + 3, Step("rest", "right"))])

    for place_args, shift, landed in (({"landed_r": 0.03}, (0.0, 0.0, 0.04), True),
                                      ({"landed_r": 0.03}, (0.0, 0.0, -0.01), True),      # a sunk floor
                                      ({"landed_r": 0.03}, (0.05, 0.0, 0.04), False),     # off its centre
                                      ({"landed_r": 0.03}, (0.0, 0.0, 0.30), False),      # over its top
                                      ({}, (0.0, 0.0, 0.04), False)):
        ep = _episode()
        stream = _stream(ep)
        stream.advance(SETTLE_S)
        queue_after_slip(stream, place_args)
        q = stream.planner.q
        bowl = q.position("fruit_bowl")
        lo, _ = q.extent("fruit_bowl")
        _teleport(ep, OBJECT, np.r_[bowl[:2], lo[2]] + shift - q.position(OBJECT))
        assert stream._landed("right") == landed
        left = ["rest"] if landed else ["grasp", "move", "place", "rest"]
        assert [i.step.do for i in stream.queues["right"]] == left


def test_an_object_moved_away_during_the_grasp_is_retried_from_its_new_place_and_the_task_completes():
    ep = _episode()
    stream = _stream(ep)
    moved = []

    def nudge(report):
        if not moved and report.tick * ep.rt.sim.scene.control_dt >= SETTLE_S + 1.0:   # while reaching
            _teleport(ep, OBJECT, [0.0, 0.08, 0.0])
            moved.append(report.tick)
    result, _ = ep.run(None, on_tick=nudge)
    assert moved and not stream.checks[0][2].held                 # the first grasp closed on air
    assert any(c.held for _, _, c in stream.checks[1:])           # a retry from the live pose held it
    assert result.strict_success == 1


def test_the_lockstep_stream_is_deterministic():
    runs = []
    for _ in range(2):
        ep = _episode(max_seconds=4.0)
        actions = []
        ep.run(None, on_tick=lambda r, ep=ep, actions=actions: actions.append(ep.session.action.copy()))
        runs.append((np.array(actions), ep.rt.sim.data.qpos.copy(), _grasp_keys(_stream(ep))))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_the_realtime_stream_reads_its_own_copy_of_the_scene_published_by_the_loop():
    ep = _episode()
    stream = live_episode(ep.rt, ep.retargeter, shadow=True)
    assert stream.planner.q.data is not ep.rt.sim.data
    before = stream.planner.q.position(OBJECT)
    _teleport(ep, OBJECT, [0.0, 0.05, 0.0])
    stream.frame_at(0.1, 0, 0.0)
    np.testing.assert_array_equal(stream.planner.q.position(OBJECT), before)     # not yet published
    stream.publish(ep.rt.sim.data)                                               # the loop thread's hand-over
    stream.frame_at(0.2, 1, 0.0)
    np.testing.assert_allclose(stream.planner.q.position(OBJECT), before + [0.0, 0.05, 0.0], atol=1e-9)


def test_a_grasp_with_regrasp_false_notes_a_slip_and_carries_on():
    """Opt-in ``regrasp: false``: the slip is recorded, nothing is grasped again, the plan goes on."""
    ep = _episode()
    stream = _stream(ep)
    queue = stream.queues["right"]
    k = next(i for i, it in enumerate(queue) if it.step.do == "grasp")
    step = queue[k].step
    queue[k] = dataclasses.replace(queue[k], step=dataclasses.replace(step, args={**step.args, "regrasp": False}))
    _held_after_grasp(ep, stream)
    assert stream.checks[-1][2].held and "right" in stream.carrying
    place = stream.active["right"]
    assert place.step.do == "place"
    t = stream.planner.sides["right"].keys[-1].t - 3.0
    stream.advance(t - 1.0)
    _teleport(ep, OBJECT, [0.0, 0.0, -0.15])
    stream.advance(t)
    assert stream.slips and stream.slips[-1][1] == "right"
    assert "right" not in stream.carrying
    assert stream.active["right"] is place                        # the place goes on: no back-off
    assert all(i.step.do != "grasp" for i in stream.queues["right"])
