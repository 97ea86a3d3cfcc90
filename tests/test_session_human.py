"""The person operator through the whole loop (headset messages -> device -> engage -> retarget ->
physics): one hand lost for a second, and hands crossing."""
from __future__ import annotations

import mujoco
import numpy as np

from devices.synthetic import SyntheticOperator
from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.synthetic.person import NEUTRAL_ARM, HumanOperator, Key, Motion, arm, device_stream

TASK = "put_peach_in_fruit_bowl"
DT = 0.04


def _session(motion: Motion):
    episode = Episode(EpisodeOptions(task=TASK, device="synthetic", episode_index=0,
                                     device_options={"dropout_per_s": 0.0}))
    device = SyntheticOperator(device_stream(HumanOperator(), motion), motion.duration)
    episode.session.attach(device)
    device.connect()
    return episode


def _wrists(episode) -> dict:
    sim = episode.rt.sim
    return {s: sim.data.site(sim.scene.layout.ee_sites[s]).xpos.copy() for s in ("left", "right")}


def test_one_hand_lost_for_a_second_the_other_follows_and_the_return_is_gentle():
    """The left hand leaves the headset's view for 1 s and comes back 25 cm from where it left. The
    right arm keeps following throughout; the left holds, then glides back at <= 0.3 m/s (it used to
    freeze both arms and rush back at 0.75 m/s)."""
    n = tuple(NEUTRAL_ARM)
    away = arm(-40, 35, 0, 40, 0, 30, 0)                       # the left hand, moved while unseen
    right = [Key(0.0, n), Key(1.5, n)] + [Key(1.5 + 0.5 * i, arm(-40 + (15 if i % 2 else -5), 10 - 15 * (i % 2)))
                                          for i in range(1, 12)]
    left = [Key(0.0, n), Key(2.0, n), Key(2.04, n, tracked=False), Key(2.9, away, tracked=False),
            Key(3.04, away), Key(7.5, away)]
    episode = _session(Motion({"left": left, "right": right}))
    sides = episode.retargeter.idx
    left_i, right_i = np.r_[sides["left"]], np.r_[sides["right"]]
    reports, actions, wrists = [], [], []
    for _ in range(int(7.0 / DT)):
        reports.append(episode.session.tick())
        actions.append(episode.session.action.copy())
        wrists.append(_wrists(episode))
    actions = np.array(actions)
    lost = [i for i, r in enumerate(reports) if r.held_sides]
    assert lost and all(reports[i].held_sides == ("left",) and reports[i].marked for i in lost)
    assert 20 <= len(lost) <= 27                                   # ~1 s of ticks
    assert all(reports[i].engage_state in ("engaged", "easing") for i in lost)   # never a whole-robot hold
    for i in lost[1:]:
        np.testing.assert_array_equal(actions[i][left_i], actions[i - 1][left_i])      # the left holds
    moved = np.abs(np.diff(actions[lost[0]:lost[-1] + 1][:, right_i], axis=0)).max(axis=1)
    assert np.mean(moved > 1e-4) > 0.8                            # the right keeps following
    speed = np.array([np.linalg.norm(wrists[i + 1]["left"] - wrists[i]["left"]) / DT
                      for i in range(lost[-1], len(wrists) - 1)])
    assert speed.max() <= 0.3, speed.max()                        # the return glides in
    end = reports[-1]
    assert end.engage_state == "engaged" and not end.held_sides
    # ... and then the left follows the hand where it is now (the gap to its target closed)
    assert episode.retargeter.last is not None
    assert np.abs(actions[-1][left_i] - actions[-2][left_i]).max() < 0.02


def _side_geoms(model, side: str) -> list[int]:
    root = model.body(f"{side}_link3").id
    out = []
    for g in range(model.ngeom):
        b = model.geom_bodyid[g]
        while b > 0 and b != root:
            b = model.body_parentid[b]
        if b == root and (model.geom_contype[g] or model.geom_conaffinity[g]):
            out.append(g)
    return out


def test_crossed_hands_keep_the_arms_two_centimetres_apart():
    """The operator crosses their forearms in front of the body and back: commanded poses and the
    simulated arms keep >= 2 cm between the two sides (they used to pass through each other)."""
    n = tuple(NEUTRAL_ARM)
    cross = arm(-30, -40, 0, 70, 0, 30, 0)
    motion = Motion({s: [Key(0, n), Key(1.5, n), Key(3.5, cross), Key(4.5, cross), Key(6.5, n)]
                     for s in ("left", "right")})
    episode = _session(motion)
    m = episode.rt.sim.model
    left, right = _side_geoms(m, "left"), _side_geoms(m, "right")
    commanded = mujoco.MjData(m)
    qadr = [m.joint(j).qposadr[0] for j in episode.rt.sim.scene.layout.action_joints]
    sim_gap, cmd_gap = [], []
    for _ in range(int(6.5 / DT)):
        episode.session.tick()
        d = episode.rt.sim.data
        sim_gap.append(min(mujoco.mj_geomDistance(m, d, a, b, 0.3, None) for a in left for b in right))
        commanded.qpos[qadr] = episode.session.action
        mujoco.mj_kinematics(m, commanded)
        cmd_gap.append(min(mujoco.mj_geomDistance(m, commanded, a, b, 0.3, None) for a in left for b in right))
    assert min(sim_gap) < 0.08                                   # the hands did come close
    assert min(cmd_gap) >= 0.02, min(cmd_gap)
    assert min(sim_gap) >= 0.02, min(sim_gap)
    assert all(w.number == 0 for w in episode.rt.sim.data.warning)
