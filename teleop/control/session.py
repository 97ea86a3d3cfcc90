"""The control loop: device -> engage -> retarget -> sim -> scorer (-> take) -> publish, at the
control rate (robot.yaml).

:meth:`Session.tick` is one control tick and never blocks: the device hands over its latest frame
(a lock-protected slot), publishers take values into their own latest-value slots or queues, the
take journal appends in memory and fsyncs at most twice a second. ``run_fast`` steps as fast
as possible; the app and paced episodes call ``tick`` from a :class:`teleop.control.loop.RealtimeLoop`.

The session owns the tick's state: it alone steps the simulation (a recorder only captures before
the step and appends after it), and :meth:`Session.reset` is the one way an episode starts — the
task's reset, the retargeter's solvers, filters and clock, the engage gate and the action.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from collections.abc import Callable

import mujoco
import numpy as np

from devices.base import Device, Reading
from devices.codec import FRAME_COLUMNS, frame_to_vector
from devices.engage import EngageConfig, EngageGate, EngageState
from recordings.takefile import age_to_ms
from teleop.control.operator_map import operator_input, operator_wrists
from teleop.control.publish import DevicePublisher
from teleop.core.conventions import SIDES
from teleop.core.errors import TeleopError


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
    held_sides: tuple = ()       # sides holding while the other follows (that hand's tracking lost)

    # The score's figures, read through (the UI and reports use them by these names).
    progress = property(lambda self: self.score.progress)
    strict_success = property(lambda self: self.score.strict_success)
    latched = property(lambda self: self.score.latched)
    holds = property(lambda self: self.score.holds)
    violated = property(lambda self: self.score.violated)
    done = property(lambda self: self.score.done)


Publisher = Callable[["Session", TickReport], None]


class SessionError(TeleopError):
    """A session was asked for something its state does not allow."""

# Easing ends once the robot is within 0.05 rad of a (possibly moving) target: a person's hand
# moves ~0.02 rad per tick, so a tighter tolerance would keep the robot easing behind them. While
# easing (engage, a hand coming back) no wrist moves faster than EASE_WRIST_SPEED: a returning
# hand's target glides in from the robot's wrist at that speed (in the operator frame: divided by
# the retargeter's arm scale), and the joint steps are scaled to it.
EASE_WRIST_SPEED = 0.25          # m/s, robot wrists
SESSION_ENGAGE = EngageConfig(ease_velocity=1.0, ease_tolerance=0.05, ease_wrist_speed=EASE_WRIST_SPEED)


class WristPositions:
    """Action vector (58,) -> {side: robot wrist site position (3,)} by forward kinematics on a
    private MjData (the simulation's own data is never touched)."""

    def __init__(self, scene):
        self.model = scene.model
        self.data = mujoco.MjData(scene.model)
        layout = scene.layout
        self.qadr = np.array([self.model.joint(n).qposadr[0] for n in layout.action_joints])
        self.sites = {side: self.model.site(layout.ee_sites[side]).id for side in SIDES}

    def __call__(self, q) -> dict:
        self.data.qpos[self.qadr] = q
        mujoco.mj_kinematics(self.model, self.data)
        return {side: self.data.site_xpos[i].copy() for side, i in self.sites.items()}


NO_READING = Reading(None, float("inf"), True, 0)     # what a session without a device reads


class Session:
    """One task runtime, one retargeter and (optionally) one device, ticked at the control rate."""

    def __init__(self, runtime, retargeter, device: Device | None = None, engage: EngageConfig = SESSION_ENGAGE):
        self.rt, self.retargeter = runtime, retargeter
        self.engage = engage
        self._wrists = WristPositions(runtime.sim.scene)
        self.gate = self._new_gate()
        self.device: Device | None = None
        self.publishers: list[Publisher] = []
        self.recorder = None
        self.dt = runtime.sim.scene.control_dt
        self.action = runtime.sim.joint_positions
        self.last_report: TickReport | None = None
        self.frames_received = 0          # the device's frame counter at the last tick (Reading.index)
        self.last_frame = None            # the device frame the last tick read
        self._resumed = None              # (take, tick, sim tick) after resume(): the next take continues it
        self.attach(device)

    # -- episode control -------------------------------------------------------------------------
    def reset(self, seed_index: int = 0, episode_index: int = 0, initial_state=None) -> None:
        """Start an episode: the task's deterministic reset (or ``initial_state``, a serialised
        state of this model), and every piece of tick state back to its start."""
        if self.recorder is not None:
            raise SessionError("reset while recording: stop the take first")
        self.rt.reset(seed_index, episode_index)
        if initial_state is not None:
            self.rt.restore(initial_state)
        self.action = self.rt.sim.joint_positions
        self.retargeter.reset(self.action)
        self.gate = self._new_gate()
        self.last_report, self.last_frame = None, None
        self._resumed = None

    def resume(self, take, tick: int) -> None:
        """Start an episode at ``tick`` of a recorded take (rewind and continue).

        The take's initial state, then its first ``tick`` actions stepped the way a live tick steps
        them (physics, scene events, scoring), so the scorer's latches and the events' counters have
        seen the same history — restoring the recorded state alone would restart scoring at tick 0.
        The state reached must be the recorded one bit for bit (else the take cannot be continued
        exactly). The next :meth:`start_recording` records the prefix plus the new ticks."""
        from recordings.splice import check_tick   # recording is optional for a session

        meta = take.meta
        if meta.task_id != self.rt.spec.id or meta.model_fingerprint != self.rt.sim.scene.fingerprint:
            raise SessionError(f"take {meta.take_id} is of task {meta.task_id} (model {meta.model_fingerprint}); "
                               f"this session runs {self.rt.spec.id} ({self.rt.sim.scene.fingerprint})")
        tick = check_tick(take, tick)
        self.reset(meta.seed_index, meta.episode_index, initial_state=take.initial_state)
        actions, states = take.arrays["actions"], take.arrays["states"]
        for t in range(tick):
            self.rt.step(actions[t].astype(np.float64))
        if tick < take.length and not np.array_equal(self.rt.sim.get_state(), states[tick]):
            raise SessionError(f"take {meta.take_id} does not replay bit-exactly to tick {tick} here "
                               "(another MuJoCo build?): it cannot be continued")
        if tick:
            self.action = actions[tick - 1].astype(np.float64)     # the target the robot holds at ``tick``
            self.retargeter.reset(self.action)
        self._resumed = (take, tick, self.rt.sim.tick)

    @property
    def resumed_from(self) -> tuple[str, int] | None:
        """(take id, tick) the current episode continues, until the next reset."""
        return None if self._resumed is None else (self._resumed[0].meta.take_id, self._resumed[1])

    def _gate_config(self) -> EngageConfig:
        """The engage settings with the glide speed in the operator frame of this retargeter."""
        cfg = self.engage
        if cfg.ease_wrist_speed > 0 and cfg.ease_speed == 0:
            cfg = dataclasses.replace(cfg, ease_speed=cfg.ease_wrist_speed / self.retargeter.arm_scale())
        return cfg

    def _new_gate(self) -> EngageGate:
        idx = self.retargeter.idx
        return EngageGate(self._gate_config(), side_joints={s: np.r_[idx[s][0], idx[s][1]] for s in SIDES},
                          wrist_positions=self._wrists, arm_joints={s: idx[s][0] for s in SIDES})

    def attach(self, device: Device | None, publishers: tuple[Publisher, ...] | None = None) -> None:
        """Drive the robot with ``device`` (None: none) from the next tick; by default it gets the
        standard publisher (poses, haptics, HUD). The caller connects and closes devices."""
        self.device = device
        if publishers is None:
            sim = self.rt.sim
            publishers = () if device is None else (DevicePublisher(device, sim.model, sim.scene.layout, self.rt.spec),)
        self.publishers = list(publishers)

    def set_retargeter(self, retargeter) -> None:
        """Retarget with ``retargeter`` from now on (a new operator profile), started at the current pose."""
        retargeter.reset(self.action)
        self.retargeter = retargeter
        self.gate.config = self._gate_config()

    def set_target(self, index: int, value: float) -> None:
        """A joint-panel target: held while no device drives the robot."""
        self.action = self.action.copy()
        self.action[index] = value

    def hold(self, action) -> None:
        """Joint targets (58,) held from the next tick while no device drives the robot (a joint
        panel, a scripted motion): ``hold(q); tick()`` steps, scores and records like any tick."""
        action = np.asarray(action, np.float64)
        if action.shape != self.action.shape:
            raise SessionError(f"hold: targets must have shape {self.action.shape}, got {action.shape}")
        self.action = action.copy()

    def start_recording(self, store, operator: str, seed_index: int = 0, episode_index: int = 0, **meta):
        """Record from the next tick. After :meth:`resume` (and no tick since) the take starts
        with the resumed take's prefix."""
        from recordings.recorder import EpisodeRecorder   # recording is optional for a session
        from recordings.splice import ContinuedRecorder

        if self.recorder is not None:
            raise SessionError("already recording")
        device = meta.pop("device", "")
        if self._resumed is not None:
            take, tick, at = self._resumed
            if self.rt.sim.tick != at:
                raise SessionError("the resumed episode has ticked since resume(): resume again to continue it")
            self.recorder = ContinuedRecorder(store, self.rt, take, tick, operator, device=device,
                                              frame_columns=FRAME_COLUMNS, **meta).start()
            return self.recorder
        self.recorder = EpisodeRecorder(store, self.rt, operator, device=device,
                                        frame_columns=FRAME_COLUMNS, seed_index=seed_index,
                                        episode_index=episode_index, **meta).start()
        return self.recorder

    def stop_recording(self, keep: bool = True, on_done: Callable | None = None):
        """Finish the take (``keep``) or keep it as interrupted.

        Without ``on_done`` the file is written now and the indexed Take returned. With it, the
        recorder is detached now and the file is written on a worker thread (the control loop never
        waits on disk); ``on_done(path_or_exception)`` is called from that thread.
        """
        rec, self.recorder = self.recorder, None
        if rec is None:
            return None
        if on_done is None:
            return rec.finish() if keep else rec.abort()

        def finish():
            try:
                on_done(rec.writer.finish() if keep else rec.writer.abort())
            except Exception as exc:  # noqa: BLE001 - the journal stays on disk: recovered at next start
                on_done(exc)
        threading.Thread(target=finish, name="take-finisher", daemon=True).start()
        return None

    # -- the tick --------------------------------------------------------------------------------
    def _robot_wrists(self) -> dict:
        data, layout = self.rt.sim.data, self.rt.sim.scene.layout
        return {side: data.site(layout.ee_sites[side]).xpos.copy() for side in SIDES}

    def _retarget(self, decision):
        if not decision.follow:
            return None, 0.0
        t0 = time.perf_counter()
        # Easing in (engage, a hand coming back): the arms ease through the retargeter, from the
        # applied action at the ease speed, so the path is its continuous, separation-checked one
        # and not a straight joint-space line the gate would draw between two far configurations.
        easing = SIDES if decision.state is EngageState.EASING else tuple(self.gate.easing_sides)
        step = float(np.min(self.engage.ease_velocity)) * self.dt
        result = self.retargeter.step(operator_input(decision.frame), {s: step for s in easing},
                                      self.action if easing else None)
        return result, (time.perf_counter() - t0) * 1e3

    def tick(self) -> TickReport:
        t0 = time.perf_counter()
        reading = self.device.read() if self.device is not None else NO_READING
        self.frames_received, self.last_frame = reading.index, reading.frame
        # Where the robot's wrists map in the operator frame: the engage anchor, and where a hand
        # coming back glides in from.
        anchor = operator_wrists(self.retargeter, self._robot_wrists(), reading.frame)
        # The gate's clock is control time, not the wall: a replay then makes the same decisions.
        decision = self.gate.observe(reading, self.rt.sim.tick * self.dt, robot_wrists=anchor)
        result, retarget_ms = self._retarget(decision)
        target = None if result is None else result.targets
        unsettled = () if result is None else tuple(s for s, h in result.sides.items() if h.arm_limited)
        # Rounded to float32 once, here: the take stores float32 actions and replay applies them.
        applied = self.gate.command(target, self.action, self.dt, unsettled).astype(np.float32)
        self.action = applied.astype(np.float64)
        score, physics_ms, score_ms = self._advance()
        tick_ms = (time.perf_counter() - t0) * 1e3
        if self.recorder is not None:
            timing = {"wall_time": time.time(), "frame_age_ms": age_to_ms(reading.age), "retarget_ms": retarget_ms,
                      "physics_ms": physics_ms, "score_ms": score_ms, "tick_ms": tick_ms}
            flags = {"engaged": decision.follow, "held": not decision.follow or bool(decision.held_sides),
                     "stale": reading.stale}
            self.recorder.append(applied, score, timing, frame_to_vector(reading.frame), flags)
        report = self._report(reading, decision, result, retarget_ms, physics_ms, score_ms, tick_ms, score)
        for publish in self.publishers:
            publish(self, report)
        self.last_report = report
        return report

    def _advance(self):
        """Physics, scene events and scoring for the current action: (TickScore, physics ms, score ms)."""
        if self.recorder is not None:
            self.recorder.capture()
        t0 = time.perf_counter()
        self.rt.sim.step(self.action)
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
            residual_mm=float(np.median(finite)) if finite.size else float("nan"), held_sides=decision.held_sides)

    # -- running ---------------------------------------------------------------------------------
    def run_fast(self, max_ticks: int, until_done: bool = True) -> list[TickReport]:
        """Tick as fast as possible (for tests and offline runs with lock-step devices)."""
        reports = []
        for _ in range(max_ticks):
            reports.append(self.tick())
            if until_done and reports[-1].done:
                break
        return reports
