"""Re-validation: replay a take's actions from its serialised initial state, compare, re-score.

A take passes only when all of these hold, and the report names each one that does not:

* every array has its declared shape and is finite, indexes are in range (:mod:`recordings.checks`);
* the actions lie within the actuators' control ranges;
* replaying the actions from the initial state reproduces the recording: bit for bit on the build
  the take was recorded on, within a stated tolerance on another (:mod:`recordings.replay_check`;
  the report records both builds and which rule applied);
* the replay re-achieves the goal (strict success 1).

The report also carries the take's digest, so an export can tell the take is still the one that
was checked. Runs in-process (:func:`validate_take`) or in a child process (:func:`validate_in_process`).
"""
from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from recordings.build import build_of, current_build, describe, same_build
from recordings.checks import array_problems, range_problems, take_digest
from recordings.errors import TakeError
from recordings.replay_check import replay_compare
from recordings.takefile import Take, read_take
from teleop.core.errors import TeleopError


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
    problems: list = field(default_factory=list)        # every reason it failed, one line each
    unreadable: bool = False                            # the file itself could not be read
    comparison: str = ""                                # "bit-exact (same build)" or the tolerance used
    tolerance: float = 0.0
    build: dict = field(default_factory=dict)           # this validation's build
    take_build: dict = field(default_factory=dict)      # the build the take was recorded on
    divergence_tick: int | None = None                  # first tick where the replay differs
    max_obs_error: float = 0.0
    digest: str = ""                                    # recordings.checks.take_digest of the take

    def to_dict(self) -> dict:
        return asdict(self)


def _fail(take: Take | None, path, reason: str, **kw) -> ValidationReport:
    take_id = take.meta.take_id if take is not None else Path(path).stem
    return ValidationReport(take_id, str(path), False, reason, problems=kw.pop("problems", [reason]), **kw)


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
    try:
        take = read_take(path)
    except TakeError as exc:
        return _fail(None, path, str(exc), unreadable=True, seconds=time.perf_counter() - start)
    builds = {"build": current_build(), "take_build": build_of(take.meta.software), "digest": take_digest(take)}
    problems = array_problems(take)
    if problems:
        return _fail(take, path, "; ".join(problems), problems=problems, seconds=time.perf_counter() - start,
                     **builds)
    try:
        rt = runtime_for(take.meta.task_id, horizon=max(take.length, 1))
        if rt.task.scene.fingerprint != take.meta.model_fingerprint:
            return _fail(take, path, f"recorded under another model ({take.meta.model_fingerprint}); task "
                                     f"{take.meta.task_id!r} now builds {rt.task.scene.fingerprint}", **builds)
        problems = range_problems(take.arrays["actions"], rt.sim.ctrl_low, rt.sim.ctrl_high,
                                  rt.sim.scene.layout.action_joints)
        names = tuple(s.name for s in rt.spec.subtasks)
        if names != take.meta.subtask_names:
            problems.append(f"the take names subtasks {list(take.meta.subtask_names)}; task {take.meta.task_id!r} "
                            f"has {list(names)}")
        if problems:
            return _fail(take, path, "; ".join(problems), problems=problems, **builds)
        rt.restore(take.initial_state)
        exact = same_build(take.meta.software)
        cmp = replay_compare(rt, take, exact)
        result = rt.result()
    except (TakeError, TeleopError) as exc:
        return _fail(take, path, str(exc), seconds=time.perf_counter() - start, **builds)
    rule = ("bit-exact (same build: " + describe(builds["build"]) + ")" if exact else
            f"within {cmp.tolerance:g} (recorded on {describe(builds['take_build'])}, "
            f"replayed on {describe(builds['build'])})")
    if result.strict_success != 1:
        problems.append(_failure_reason(result))
    if cmp.divergence_tick is not None:
        problems.append(f"replay does not reproduce the recording {rule}: at tick {cmp.divergence_tick}, "
                        f"{cmp.divergence}")
    latch = {s.name: s.latch_step for s in result.subtasks}
    reason = "; ".join(problems) if problems else f"strict success on replay; recording reproduced {rule}"
    return ValidationReport(take.meta.take_id, str(path), not problems, reason, result.strict_success,
                            float(result.progress), latch, result.first_failure_step, cmp.max_joint_error,
                            cmp.max_object_error, cmp.ticks, time.perf_counter() - start, problems,
                            comparison=rule, tolerance=cmp.tolerance, divergence_tick=cmp.divergence_tick,
                            max_obs_error=cmp.max_obs_error, **builds)


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
