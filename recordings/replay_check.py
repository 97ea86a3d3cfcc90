"""Replay a take's actions through its task runtime and compare every tick with what was recorded.

On the take's own build the replay must reproduce the recording bit for bit: the full simulator
state and the observation before each action, the instruction shown, whether the memory cue is
hidden, and the progress and latched
subtasks scored after it. On another build positions must agree within
:data:`recordings.build.CROSS_BUILD_TOLERANCE`. The first divergence is described (tick, field,
joint or state component); the largest errors are measured over the whole take.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from recordings.build import CROSS_BUILD_TOLERANCE
from recordings.takefile import Take
from teleop.sim import HEADER

# mjSTATE_INTEGRATION is these components, concatenated in this (bit) order.
_COMPONENTS = [s for s in sorted(mujoco.mjtState.__members__.values(), key=int)
               if int(s) & int(mujoco.mjtState.mjSTATE_INTEGRATION) and bin(int(s)).count("1") == 1]
OBS_POSITIONS = np.r_[0:58, 116:130]          # joint positions and wrist poses (velocities: 58:116)


@dataclass
class Comparison:
    exact: bool
    tolerance: float
    ticks: int = 0
    max_joint_error: float = 0.0        # rad, robot joints vs the recorded states
    max_object_error: float = 0.0       # m / rad, every other qpos entry
    max_obs_error: float = 0.0
    divergence_tick: int | None = None
    divergence: str = ""                # the first one, described

    def diverge(self, tick: int, what: str) -> None:
        if self.divergence_tick is None:
            self.divergence_tick, self.divergence = tick, what


def _err(a, b) -> np.ndarray:
    d = np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))
    d[np.isnan(d)] = np.inf           # NaN compares as the largest error, never as 0
    return d


class StateLabels:
    """Names for the entries of a serialised state: ``qpos of joint 'cube' [2]``, ``qvel[12]``..."""

    def __init__(self, model: mujoco.MjModel):
        self.spans, start = [], HEADER
        for comp in _COMPONENTS:
            size = mujoco.mj_stateSize(model, comp)
            if size:
                self.spans.append((start, start + size, comp.name.removeprefix("mjSTATE_").lower()))
            start += size
        self.joint_of = {}
        for j in range(model.njnt):
            adr = int(model.jnt_qposadr[j])
            width = {0: 7, 1: 4}.get(int(model.jnt_type[j]), 1)        # free, ball, else 1
            for k in range(width):
                self.joint_of[adr + k] = (model.joint(j).name, k, width)

    def __call__(self, index: int) -> str:
        if index < HEADER:
            return f"state header[{index}]"
        for lo, hi, name in self.spans:
            if lo <= index < hi:
                k = index - lo
                if name == "qpos" and k in self.joint_of:
                    joint, part, width = self.joint_of[k]
                    return f"qpos of joint {joint!r}" + (f" [{part}]" if width > 1 else "")
                return f"{name}[{k}]"
        return f"state[{index}]"


def replay_compare(rt, take: Take, exact: bool) -> Comparison:
    """Step every recorded action from the take's initial state (``rt.restore`` first)."""
    sim, arrays = rt.sim, take.arrays
    cmp = Comparison(exact, 0.0 if exact else CROSS_BUILD_TOLERANCE)
    labels = StateLabels(sim.model)
    nq = sim.model.nq
    robot = np.zeros(nq, bool)
    robot[sim.qpos_idx] = True
    qpos = slice(HEADER + 1, HEADER + 1 + nq)      # after the header: time, then qpos
    for t, action in enumerate(arrays["actions"]):
        state, obs = sim.get_state(), sim.observation()
        diff = _err(state[qpos], arrays["states"][t][qpos])
        cmp.max_joint_error = max(cmp.max_joint_error, float(diff[robot].max()))
        if (~robot).any():
            cmp.max_object_error = max(cmp.max_object_error, float(diff[~robot].max()))
        obs_diff = _err(obs, arrays["obs"][t])
        cmp.max_obs_error = max(cmp.max_obs_error, float(obs_diff.max()))
        if exact:
            _exact_tick(cmp, t, state, obs, rt, take, labels)
        else:
            if diff.max() > cmp.tolerance:
                i = int(np.argmax(diff))
                cmp.diverge(t, f"{labels(qpos.start + i)} differs by {diff[i]:.3g}")
            if obs_diff[OBS_POSITIONS].max() > cmp.tolerance:
                cmp.diverge(t, f"observation[{int(OBS_POSITIONS[np.argmax(obs_diff[OBS_POSITIONS])])}] differs")
        rt.step(action.astype(np.float64))
        cmp.ticks += 1
        if exact:
            score = rt.last
            if np.float32(score.progress) != arrays["progress"][t]:
                cmp.diverge(t, f"progress after the action is {score.progress:g} on replay, "
                               f"{float(arrays['progress'][t]):g} recorded")
            latched = np.array(score.latched, np.uint8)
            if latched.shape != arrays["subtasks"][t].shape or not np.array_equal(latched, arrays["subtasks"][t]):
                cmp.diverge(t, f"latched subtasks {latched.tolist()} on replay, "
                               f"{arrays['subtasks'][t].tolist()} recorded")
    return cmp


def _exact_tick(cmp: Comparison, t: int, state, obs, rt, take: Take, labels: StateLabels) -> None:
    arrays = take.arrays
    recorded = arrays["states"][t]
    if not np.array_equal(state, recorded):
        d = _err(state, recorded)
        i = int(np.argmax(d))
        cmp.diverge(t, f"{labels(i)} differs by {d[i]:.3g}")
    if not np.array_equal(obs, arrays["obs"][t]):
        i = int(np.argmax(_err(obs, arrays["obs"][t])))
        cmp.diverge(t, f"observation[{i}] is {obs[i]:.6g} on replay, {float(arrays['obs'][t][i]):.6g} recorded")
    shown = rt.instruction
    index = int(arrays["instruction"][t])
    if take.meta.instructions[index] != shown:
        cmp.diverge(t, f"instruction {take.meta.instructions[index]!r} recorded, {shown!r} on replay")
    if "cue_hidden" in arrays and bool(arrays["cue_hidden"][t]) != rt.cue_hidden:
        cmp.diverge(t, f"the memory cue is {'hidden' if arrays['cue_hidden'][t] else 'visible'} in the recording, "
                       f"{'hidden' if rt.cue_hidden else 'visible'} on replay")
