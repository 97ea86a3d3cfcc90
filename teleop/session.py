"""The control loop: device -> engage -> retarget -> sim -> scorer (-> take) -> publish, at 25 Hz.

:meth:`Session.tick` is one control tick and never blocks: the device hands over its latest frame
(a lock-protected slot), publishers take values into their own latest-value slots or queues, the
take journal appends in memory and fsyncs at most twice a second. ``run`` paces ticks in real
time on a :class:`teleop.loop.RealtimeLoop` thread; ``run_fast`` steps as fast as possible.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from devices.codec import FRAME_COLUMNS, frame_to_vector
from devices.replay import ReplayDevice
from devices.engage import EngageConfig, EngageGate, EngageState
from teleop.operator_map import operator_input, operator_wrists


@dataclass(frozen=True)
class TickReport:
    tick: int
    frame_age_ms: float          # age of the device frame used (inf: none)
    retarget_ms: float
    physics_ms: float
    score_ms: float
    tick_ms: float               # the whole tick
    overhead_ms: float           # everything except physics and retargeting
    engage_state: str
    marked: bool                 # a dropout tick: the robot held its pose
    reason: str                  # why the robot did not follow ("" when it did)
    retarget_status: str
    score: object                # the task runtime's TickScore for this tick
    instruction: str
    residual_mm: float           # median hand keypoint residual over tracked hands (NaN: none)

    # The score's figures, read through (the UI and reports use them by these names).
    progress = property(lambda self: self.score.progress)
    strict_success = property(lambda self: self.score.strict_success)
    latched = property(lambda self: self.score.latched)
    holds = property(lambda self: self.score.holds)
    violated = property(lambda self: self.score.violated)
    done = property(lambda self: self.score.done)


Publisher = Callable[["Session", TickReport], None]

# Easing ends once the robot is within 0.05 rad of a (possibly moving) target: a person's hand
# moves ~0.02 rad per tick, so a tighter tolerance would keep the robot easing behind them.
SESSION_ENGAGE = EngageConfig(ease_velocity=1.0, ease_tolerance=0.05)


class Session:
    def __init__(self, runtime, device, retargeter, gate: EngageGate | None = None,
                 publishers: tuple[Publisher, ...] = ()):
        self.rt, self.device, self.retargeter = runtime, device, retargeter
        self.gate = gate or EngageGate(SESSION_ENGAGE)
        self.publishers = list(publishers)
        self.recorder = None
        self.action = runtime.sim.joint_positions
        self.dt = runtime.sim.scene.control_dt
        self.last_report: TickReport | None = None
        self.frames_received = 0          # the device's frame counter at the last tick (Reading.index)
        self.last_frame = None            # the device frame the last tick read

    # -- episode control -------------------------------------------------------------------------
    def reset(self, seed_index: int = 0, episode_index: int = 0) -> None:
        self.rt.reset(seed_index, episode_index)
        self.action = self.rt.sim.joint_positions
        self.retargeter.last = self.action.copy()

    def start_recording(self, store, operator: str, seed_index: int = 0, episode_index: int = 0, **meta):
        from recordings.recorder import EpisodeRecorder   # recording is optional for a session

        self.recorder = EpisodeRecorder(store, self.rt, operator, device=getattr(self.device, "type_name", ""),
                                        frame_columns=FRAME_COLUMNS, seed_index=seed_index,
                                        episode_index=episode_index, **meta).start()
        return self.recorder

    def stop_recording(self, keep: bool = True):
        """Finish the take (``keep``) or keep it as interrupted; returns the indexed Take."""
        rec, self.recorder = self.recorder, None
        if rec is None:
            return None
        return rec.finish() if keep else rec.abort()

    # -- the tick --------------------------------------------------------------------------------
    def _robot_wrists(self) -> dict:
        data, layout = self.rt.sim.data, self.rt.sim.scene.layout
        return {side: data.site(layout.ee_sites[side]).xpos.copy() for side in ("left", "right")}

    def _retarget(self, decision):
        if not decision.follow:
            return None, 0.0
        t0 = time.perf_counter()
        result = self.retargeter.step(operator_input(decision.frame))
        return result, (time.perf_counter() - t0) * 1e3

    def tick(self) -> TickReport:
        t0 = time.perf_counter()
        reading = self.device.read()
        self.frames_received, self.last_frame = reading.index, reading.frame
        anchor = None
        if self.gate.state in (EngageState.DISENGAGED, EngageState.ARMING, EngageState.HOLD):
            anchor = operator_wrists(self.retargeter, self._robot_wrists(), reading.frame)
        # The gate's clock is control time, not the wall: a replay then makes the same decisions.
        decision = self.gate.observe(reading, self.rt.sim.tick * self.dt, robot_wrists=anchor)
        result, retarget_ms = self._retarget(decision)
        target = None if result is None else result.targets
        self.action = self.gate.command(target, self.action, self.dt).astype(np.float32).astype(np.float64)
        flags = {"engaged": decision.follow, "held": not decision.follow, "stale": reading.stale}
        score, physics_ms, score_ms = self._advance(reading, flags, retarget_ms)
        tick_ms = (time.perf_counter() - t0) * 1e3
        report = self._report(reading, decision, result, retarget_ms, physics_ms, score_ms, tick_ms, score)
        for publish in self.publishers:
            publish(self, report)
        self.last_report = report
        return report

    def _advance(self, reading, flags, retarget_ms):
        age_ms = reading.age * 1e3 if np.isfinite(reading.age) else -1.0
        timing = {"wall_time": time.time(), "frame_age_ms": age_ms, "retarget_ms": retarget_ms}
        if self.recorder is not None:
            return self.recorder.record(self.action, timing, frame_to_vector(reading.frame), flags)
        sim = self.rt.sim
        t0 = time.perf_counter()
        sim.step(self.action)
        t1 = time.perf_counter()
        score = self.rt.after_step()
        return score, (t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3

    def _report(self, reading, decision, result, retarget_ms, physics_ms, score_ms, tick_ms, score):
        residuals = [] if result is None else [h.residual_mm for h in result.sides.values()]
        finite = np.concatenate(residuals) if residuals else np.array([])
        finite = finite[np.isfinite(finite)]
        return TickReport(
            tick=self.rt.sim.tick, frame_age_ms=reading.age * 1e3, retarget_ms=retarget_ms, physics_ms=physics_ms,
            score_ms=score_ms, tick_ms=tick_ms, overhead_ms=tick_ms - physics_ms - retarget_ms,
            engage_state=self.gate.state.value, marked=decision.marked, reason=decision.reason,
            retarget_status=result.status if result is not None else "idle", score=score,
            instruction=self.rt.instruction,
            residual_mm=float(np.median(finite)) if finite.size else float("nan"))

    # -- running ---------------------------------------------------------------------------------
    def run_fast(self, max_ticks: int, until_done: bool = True) -> list[TickReport]:
        """Tick as fast as possible (for tests and offline runs with lock-step devices)."""
        reports = []
        for _ in range(max_ticks):
            reports.append(self.tick())
            if until_done and reports[-1].done:
                break
        return reports


def replay_device(take, **options) -> ReplayDevice:
    """A replay device that feeds a recorded take's frames with the ages and stale flags it had."""
    from recordings.takefile import FLAGS, TIMING

    ages = np.maximum(take.arrays["timing"][:, TIMING.index("frame_age_ms")], 0.0)
    stale = take.arrays["flags"][:, FLAGS.index("stale")].astype(bool)
    return ReplayDevice(take.arrays["frame"], ages, stale, **options)
