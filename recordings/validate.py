"""Re-validation: replay a take's actions from its serialised initial state and re-score it.

A take passes only if the replay reaches strict success 1 (every subtask's effective completion).
The report also says how far the replay diverged from the recorded states (robot joints, objects),
so a take recorded with a different build, or tampered with, is explained, not just failed.
Runs in-process (:func:`validate_take`) or in a child process (:func:`validate_in_process`).
"""
from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from recordings.errors import TakeError
from recordings.takefile import Take, read_take
from teleop.core.errors import TeleopError
from teleop.sim import HEADER


@dataclass(frozen=True)
class ValidationReport:
    take_id: str
    path: str
    passed: bool
    reason: str
    strict_success: int = 0
    progress: float = 0.0
    latch_steps: dict = field(default_factory=dict)     # subtask name -> step or None
    first_failure_step: int | None = None
    max_joint_error: float = 0.0                        # rad, robot joints vs recorded states
    max_object_error: float = 0.0                       # m / rad, every other qpos entry
    ticks: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def _qpos(state: np.ndarray, nq: int) -> np.ndarray:
    """qpos inside a serialised state (header, then mjSTATE_INTEGRATION: time, qpos, ...)."""
    return state[HEADER + 1: HEADER + 1 + nq]


def _fail(take: Take | None, path, reason: str, **kw) -> ValidationReport:
    take_id = take.meta.take_id if take is not None else Path(path).stem
    return ValidationReport(take_id, str(path), False, reason, **kw)


def _replay(rt, take: Take) -> tuple[float, float, int]:
    """Step the recorded actions; returns (max joint error, max object error, ticks replayed)."""
    sim = rt.sim
    robot = np.zeros(sim.model.nq, bool)
    robot[sim.qpos_idx] = True
    joint_err = object_err = 0.0
    actions, states = take.arrays["actions"], take.arrays["states"]
    ticks = 0
    for t, action in enumerate(actions):
        rt.step(action.astype(np.float64))
        ticks += 1
        if t + 1 < len(states):
            diff = np.abs(sim.data.qpos - _qpos(states[t + 1], sim.model.nq))
            joint_err = max(joint_err, float(diff[robot].max()))
            if (~robot).any():
                object_err = max(object_err, float(diff[~robot].max()))
        if rt.done:
            break
    return joint_err, object_err, ticks


def task_runtime(task_id: str, horizon: int | None = None):
    """The default runtime factory: the shipped task of that id."""
    from teleop.tasks import TaskRuntime   # the task engine is only needed here

    return TaskRuntime(task_id, horizon=horizon)


def validate_take(path: Path, runtime_for=task_runtime) -> ValidationReport:
    """Validate one take file; never raises for a bad take, the report says why it failed.

    ``runtime_for(task_id, horizon)`` builds the task runtime (a module-level function, so it can
    cross into a child process).
    """
    start = time.perf_counter()
    take = None
    try:
        take = read_take(path)
        if not np.all(np.isfinite(take.arrays["actions"])):
            return _fail(take, path, "actions contain NaN or infinite values")
        rt = runtime_for(take.meta.task_id, horizon=max(take.length, 1))
        if rt.task.scene.fingerprint != take.meta.model_fingerprint:
            return _fail(take, path, f"recorded under another model ({take.meta.model_fingerprint}); task "
                                     f"{take.meta.task_id!r} now builds {rt.task.scene.fingerprint}")
        rt.restore(take.initial_state)
        joint_err, object_err, ticks = _replay(rt, take)
        result = rt.result()
    except (TakeError, TeleopError) as exc:
        return _fail(take, path, str(exc), seconds=time.perf_counter() - start)
    latch = {s.name: s.latch_step for s in result.subtasks}
    passed = result.strict_success == 1
    reason = "strict success on replay" if passed else _failure_reason(result)
    return ValidationReport(take.meta.take_id, str(path), passed, reason, result.strict_success,
                            float(result.progress), latch, result.first_failure_step, joint_err, object_err,
                            ticks, time.perf_counter() - start)


def _failure_reason(result) -> str:
    missing = [s.name for s in result.subtasks if s.effective < 1.0]
    first = next(s for s in result.subtasks if s.effective < 1.0)
    why = ("violated" if first.violated else "did not hold at the end" if first.latched else "never completed")
    return f"replay reached {result.progress:.0f}/100; first failing subtask {first.name!r} {why} " \
           f"({len(missing)} of {len(result.subtasks)} incomplete)"


def _child(path: str, runtime_for, queue) -> None:
    queue.put(validate_take(Path(path), runtime_for).to_dict())


def validate_in_process(path: Path, runtime_for=task_runtime, timeout: float = 600.0) -> ValidationReport:
    """Validate in a fresh child process (spawned: no state shared with the caller)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(str(path), runtime_for, queue), daemon=True)
    proc.start()
    try:
        return ValidationReport(**queue.get(timeout=timeout))
    except Exception as exc:  # the child died or hung: that is a failed validation, not a crash
        return _fail(None, path, f"validation process failed: {type(exc).__name__} {exc}")
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
