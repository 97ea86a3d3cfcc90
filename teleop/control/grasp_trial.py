"""One object's grasp trials: grasp -> lift 15 cm -> 1 g lateral shake -> carry, through the real loop.

The trial is a synthetic-operator script (the planner's ``grasp``, ``wait`` and ``move`` steps)
on a one-object task; it is planned from the reset scene and played as operator frames through
engage -> retarget -> physics like any take. Measured per trial: whether the object is still held
after the lift, the shake and the carry, how far it slipped in the hand (object position in the
palm frame, shake start -> end of the hold) and the lateral palm acceleration the robot reached.
Contact parameters are the library's own: this measures them, it tunes nothing.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import mujoco
import numpy as np

from devices.synthetic import SyntheticOperator
from retarget import load_config
from teleop.control.grasp_objects import GraspObject
from teleop.control.session import Session
from teleop.control.synthetic.human import HumanNoise
from teleop.control.synthetic.operator import plan_episode
from teleop.control.synthetic.script import Script, Step
from teleop.core.errors import ConfigError
from teleop.tasks import TaskRuntime
from teleop.tasks.loader import parse_spec

SIDE = "right"
SPAWN = (0.5, -0.18)            # in front of the right hand, where the scripted tasks put things
SPAWN_EXTENT = (0.03, 0.03)     # placement varies by seed, a little: each trial is another reset
LIFT_M = 0.15                   # lift height (issue 16)
SETTLE_S = 0.5                  # still after the lift, so the shake starts from a settled hold
STROKE_M = 0.08                 # shake stroke: palm back and forth along y by this much
STROKES = 6                     # out, back, ... : three full shakes
G = 9.81
SHAKE_G = 1.0                   # planned peak lateral acceleration of the operator's hand (issue 16)
# A minimum-jerk stroke of length D in T peaks at 5.7735 D / T^2: T for a SHAKE_G peak.
STROKE_S = math.sqrt(5.7735 * STROKE_M / (SHAKE_G * G))
CARRY_M = 0.20                  # carried this far toward the middle of the table, at the planner's pace
HOLD_S = 1.0                    # then held still before the verdict
HELD_RISE_M = 0.05              # held: the object still this far above where it rested (lifted 15 cm)
# Dropouts freeze the hand mid-shake and would hide the load; tremor and keypoint noise stay.
NOISE = HumanNoise(dropout_per_s=0.0)


@dataclass(frozen=True)
class TrialResult:
    episode: int
    lifted: bool                 # held at the start of the shake
    shaken: bool                 # still held after the shake
    held: bool                   # still held at the end of the carry and hold
    slip_mm: float | None        # object displacement in the palm frame, shake start -> end (held only)
    shake_peak_g: float          # peak lateral palm acceleration reached during the shake

    def to_json(self) -> dict:
        return asdict(self)


def trial_spec(obj: GraspObject):
    """A one-object task: the object alone, to be picked up."""
    raw = {"id": f"grasp_{obj.name}", "axis": "generalization", "instruction": f"Pick up the {obj.name}.",
           "objects": [{"name": obj.name, "kind": obj.kind, **obj.params,
                        "spawn": {"center": list(SPAWN), "extent": list(SPAWN_EXTENT), "yaw": [obj.yaw, obj.yaw]}}],
           "subtasks": [{"name": f"Pick up the {obj.name}", "weight": 100,
                         "predicates": [{"type": "picked_up", "object": obj.name}]}]}
    return parse_spec(raw, f"<grasp bench: {obj.task}/{obj.name}>")


def trial_script(obj: GraspObject, grasp_args: dict | None = None) -> Script:
    """``grasp_args``: more arguments of the grasp step (``{"style": "side"}``); the planner's own
    defaults otherwise (grasp_steps.default_grasp_args: by the object's size)."""
    grasp = {"object": obj.name, "grasp": "power", "lift": LIFT_M, **(grasp_args or {})}
    steps = [Step("grasp", SIDE, grasp), Step("wait", SIDE, {"seconds": SETTLE_S})]
    for i in range(STROKES):
        reach = STROKE_M / 2 if i in (0, STROKES - 1) else STROKE_M      # start and end at the centre
        sign = 1.0 if i % 2 == 0 else -1.0
        steps.append(Step("move", SIDE, {"offset": [0.0, sign * reach, 0.0],
                                         "seconds": STROKE_S * math.sqrt(reach / STROKE_M)}))   # 1 g each
    steps += [Step("wait", SIDE, {"seconds": SETTLE_S}), Step("move", SIDE, {"offset": [0.0, CARRY_M, 0.0]}),
              Step("wait", SIDE, {"seconds": HOLD_S})]
    return Script(f"grasp_{obj.name}", tuple(steps), "<grasp bench>")


def _phase_times(keys) -> tuple[float, float, float]:
    """(shake start, shake end, hold end) in plan seconds, from the keys this script adds last (the
    planner appends one closing wait). Checked against the planned strokes."""
    n = STROKES
    start, strokes = keys[-5 - n], keys[-4 - n:-4]
    moves = [b.pos[1] - a.pos[1] for a, b in zip([start, *strokes[:-1]], strokes)]
    if len(strokes) != n or not np.allclose(np.abs(moves[1:-1]), STROKE_M, atol=1e-9):
        raise ConfigError("the synthetic planner's timeline no longer ends with this bench's steps; "
                          "update teleop/control/grasp_trial.py")
    return start.t, strokes[-1].t, keys[-2].t


def run_trials(obj: GraspObject, trials: int, first_episode: int = 0,
               grasp_args: dict | None = None) -> list[TrialResult]:
    rt = TaskRuntime(trial_spec(obj))
    retargeter = load_config().build(rt.sim.scene)
    session = Session(rt, retargeter)
    script, dt = trial_script(obj, grasp_args), rt.sim.scene.control_dt
    body = rt.sim.model.body(obj.name).id
    site = rt.sim.model.site(rt.sim.scene.layout.ee_sites[SIDE]).id
    out = []
    for episode in range(first_episode, first_episode + trials):
        session.reset(0, episode)
        rest_z = float(rt.sim.data.xpos[body][2])
        stream = plan_episode(rt, retargeter, script, seed=episode, noise=NOISE)
        t0, t1, t2 = _phase_times(stream.timelines[SIDE].keys)
        device = SyntheticOperator(stream.frame_at, stream.duration, clock="lockstep", dt=dt)
        session.attach(device)
        device.connect()
        obj_pos, palm_pos, palm_rot, palm_vel = [], [], [], []
        vel = np.zeros(6)
        while not device.finished:
            session.tick()
            d = rt.sim.data
            obj_pos.append(d.xpos[body].copy())
            palm_pos.append(d.site_xpos[site].copy())
            palm_rot.append(d.site_xmat[site].reshape(3, 3).copy())
            mujoco.mj_objectVelocity(rt.sim.model, d, mujoco.mjtObj.mjOBJ_SITE, site, vel, 0)
            palm_vel.append(vel[3:].copy())             # world-frame linear velocity
        device.close()
        out.append(_measure(episode, np.array(obj_pos), np.array(palm_pos), np.array(palm_rot), np.array(palm_vel),
                            rest_z,
                            [min(len(obj_pos) - 1, int(round(t / dt))) for t in (t0, t1, t2)], dt))
    return out


def _measure(episode: int, obj, palm, rot, vel, rest_z: float, ticks: list[int], dt: float) -> TrialResult:
    i0, i1, i2 = ticks
    up = [bool(obj[i][2] - rest_z > HELD_RISE_M) for i in (i0, i1, i2)]
    in_palm = [rot[i].T @ (obj[i] - palm[i]) for i in (i0, i2)]
    slip = round(float(np.linalg.norm(in_palm[1] - in_palm[0])) * 1e3, 1) if up[0] and up[2] else None
    lateral = vel[i0:i1 + 1, 1]                       # the shake is along y
    accel = np.abs(np.diff(lateral)) / dt if len(lateral) > 1 else np.zeros(1)
    return TrialResult(episode, up[0], up[0] and up[1], all(up), slip, round(float(accel.max()) / G, 2))
