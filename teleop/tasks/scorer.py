"""The latching scorer (ARCHITECTURE.md, "Scoring semantics"), implemented exactly.

Per tick every predicate is evaluated. Subtask k latches (l_k) the first tick all its predicates
hold at once, in ordered tasks only once its prerequisites have latched. m_k = must-hold flag,
h_k = its predicates hold at the last evaluated tick, v_k = latch violation: for a subtask flagged
``latch_violation``, any tick after it latched where its predicates (the allowed state) fail.
e_k = l_k (1 - m_k + m_k h_k)(1 - v_k); strict success = prod e_k; progress = sum w_k e_k.

First-failure step: the earliest tick where a latched subtask was violated or a latched must-hold
subtask stopped holding (even if it held again later); at the end of an episode that is not a
strict success with no such tick, the final tick (timeout / termination).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from teleop.robot import default_control_hz
from teleop.tasks.predicates import build_predicate
from teleop.tasks.predicates_state import Grasped
from teleop.tasks.spec import TaskSpec
from teleop.tasks.world import Frame, TaskWorld

DEFAULT_HORIZON_S = 30.0
# An operator's pace on this robot, per subtask to achieve: the catalog's long-horizon and memory
# demonstrations average ~50 s over ~4-9 subtasks (~7.5 s each). A flat 30 s cannot fit a task of
# more than three such subtasks, and without a take that succeeds in time the accepted-takes rule
# below never gets a length to learn from, so those tasks start from this estimate instead.
PACE_S_PER_SUBTASK = 7.5
HORIZON_MARGIN = 1.2             # the catalog's: 1.2 x P90 of accepted takes


def achievement_subtasks(spec: TaskSpec) -> int:
    """Subtasks an operator has to do something for (weighted, not a state to leave alone)."""
    return sum(1 for s in spec.subtasks if s.weight > 0 and not s.latch_violation)


def horizon_steps(spec: TaskSpec, accepted_lengths=(), control_hz: float | None = None) -> int:
    """max_steps, else ceil(1.2 x P90 of accepted take lengths), else 30 s of control ticks, or the
    paced estimate (1.2 x 7.5 s per subtask to achieve, in whole seconds) where that is longer.

    ``control_hz`` is the rate of the scene the task runs in; None: the shipped robot.yaml's."""
    if spec.max_steps:
        return spec.max_steps
    if len(accepted_lengths):
        return int(math.ceil(HORIZON_MARGIN * float(np.percentile(np.asarray(accepted_lengths, float), 90))))
    paced_s = math.ceil(HORIZON_MARGIN * PACE_S_PER_SUBTASK * achievement_subtasks(spec))
    hz = default_control_hz() if control_hz is None else control_hz
    return int(round(max(DEFAULT_HORIZON_S, paced_s) * hz))


@dataclass(frozen=True)
class TickScore:
    step: int
    progress: float
    strict_success: int
    latched: tuple[bool, ...]
    holds: tuple[bool, ...]
    violated: tuple[bool, ...]
    done: bool
    terminated_by: str | None        # 'horizon' | 'distractor:<name>' | None


@dataclass(frozen=True)
class SubtaskResult:
    name: str
    weight: int
    latched: bool
    latch_step: int | None
    must_hold: bool
    held_at_end: bool
    violated: bool
    violation_step: int | None
    effective: float                 # e_k


@dataclass(frozen=True)
class EpisodeResult:
    task_id: str
    steps: int
    strict_success: int
    progress: float
    subtasks: tuple[SubtaskResult, ...]
    first_failure_step: int | None
    terminated_by: str | None


class Scorer:
    """Stateful per-episode scorer for one compiled task; call :meth:`reset` then :meth:`update` per tick."""

    def __init__(self, world: TaskWorld, horizon: int | None = None, control_hz: float | None = None):
        self.w, self.spec = world, world.spec
        self.horizon = horizon or horizon_steps(self.spec, control_hz=control_hz)
        self.preds = [[build_predicate(world, p) for p in s.predicates] for s in self.spec.subtasks]
        self.distractors = [(d, Grasped(world, {"object": d, "hand": "any", "min_contacts": 2}))
                            for d in self.spec.distractors]
        self.weights = np.array([s.weight for s in self.spec.subtasks], float)
        self.must = [s.must_hold for s in self.spec.subtasks]
        self.lv = [s.latch_violation for s in self.spec.subtasks]

    def reset(self, data) -> None:
        k = len(self.preds)
        for ps in self.preds:
            for p in ps:
                p.reset(data)
        self.latch_step: list[int | None] = [None] * k
        self.violation_step: list[int | None] = [None] * k
        self.holds = [False] * k
        self.first_failure: int | None = None
        self.terminated_by: str | None = None
        self.step = -1

    def update(self, data, step: int) -> TickScore:
        """Evaluate every predicate at control step ``step`` (0 = the reset state)."""
        f = Frame(self.w, data, step)
        self.step = step
        for k, (sub, ps) in enumerate(zip(self.spec.subtasks, self.preds)):
            results = [p(f) for p in ps]          # no short-circuit: history predicates must see every tick
            h = all(results)
            self.holds[k] = h
            if self.latch_step[k] is None:
                if h and all(self.latch_step[j] is not None for j in sub.after):
                    self.latch_step[k] = step
            elif not h:
                if self.lv[k] and self.violation_step[k] is None:
                    self.violation_step[k] = step
                if (self.lv[k] or self.must[k]) and self.first_failure is None:
                    self.first_failure = step
        for name, grasp in self.distractors:
            if self.terminated_by is None and grasp(f):
                self.terminated_by = f"distractor:{name}"
        if self.terminated_by is None and step >= self.horizon:
            self.terminated_by = "horizon"
        e = self.effective()
        return TickScore(step, float(self.weights @ e), int(np.prod(e) == 1.0),
                         tuple(s is not None for s in self.latch_step), tuple(self.holds),
                         tuple(v is not None for v in self.violation_step), self.terminated_by is not None,
                         self.terminated_by)

    def effective(self) -> np.ndarray:
        """(K,) e_k = l_k (1 - m_k + m_k h_k)(1 - v_k) at the current tick."""
        out = np.zeros(len(self.preds))
        for k in range(len(self.preds)):
            latched = self.latch_step[k] is not None             # the paper's l_k, m_k, h_k, v_k
            m, h, v = self.must[k], self.holds[k], self.violation_step[k] is not None
            out[k] = float(latched) * (1 - m + m * h) * (1 - v)
        return out

    def result(self) -> EpisodeResult:
        e = self.effective()
        success = int(np.prod(e) == 1.0)
        first = self.first_failure if self.first_failure is not None or success else self.step
        subs = tuple(SubtaskResult(s.name, s.weight, self.latch_step[k] is not None, self.latch_step[k], s.must_hold,
                                   self.holds[k], self.violation_step[k] is not None, self.violation_step[k],
                                   float(e[k]))
                     for k, s in enumerate(self.spec.subtasks))
        return EpisodeResult(self.spec.id, self.step, success, float(self.weights @ e), subs, first, self.terminated_by)
