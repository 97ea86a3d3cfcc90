"""The collection station behind the window: one task, one device, one session, ticking at the control rate
on its own thread whatever the window is doing.

The UI thread never touches the session: it queues commands (run at the top of the next tick, in
the loop thread) and reads an immutable :class:`StationSnapshot`. Building a task (compiling its
scene, the retargeter) happens on a worker thread and is swapped in by a command, so neither the
window nor the loop stalls on it.
"""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from devices.base import ConnectionInfo
from devices.config import DeviceConfig, DeviceContext, device_config
from recordings.store import TakeStore
from retarget import load_config
from teleop.control.episode import config_meta, device_configs
from teleop.control.loop import RealtimeLoop
from teleop.control.session import Session
from teleop.core.errors import TeleopError
from teleop.robot import SIDES, default_control_hz
from teleop.tasks import TaskRuntime


@dataclass(frozen=True)
class StationSnapshot:
    task_id: str | None
    model_version: int               # bumps when the task (so the model) changes
    qpos: np.ndarray | None
    report: object | None            # the last TickReport
    recording: bool
    recorded_ticks: int
    episode_index: int
    device: str | None
    connected: bool
    device_stats: dict = field(default_factory=dict)
    frame_hz: float = 0.0
    message: str = ""
    tracking: dict = field(default_factory=dict)   # side -> tracked fraction of the last frame (None: unseen)
    last_frame: object | None = None
    model: object | None = None      # the task's MjModel (compiled once, never written: safe to read)
    connection: ConnectionInfo | None = None


@dataclass
class _Bundle:
    rt: TaskRuntime
    retargeter: object


class Station:
    def __init__(self, store: TakeStore, operator: str = "operator", seed_index: int = 0):
        self.store, self.operator, self.seed_index = store, operator, seed_index
        self._commands: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._bundle: _Bundle | None = None
        self.session: Session | None = None
        self.device = None
        self.device_config: DeviceConfig | None = None
        self._connection: ConnectionInfo | None = None
        self.episode_index = 0
        self._model_version = 0
        self._message = ""
        self._frames_seen: list[tuple[float, int]] = []
        self.profile = None                           # operator profile (None: the default)
        self._manual = False                         # joint-panel targets drive the robot (no device)
        self._snapshot = StationSnapshot(None, 0, None, None, False, 0, 0, None, False)
        self.loop = RealtimeLoop(self._tick, default_control_hz(), name="station")
        self.finished_takes: queue.Queue = queue.Queue()   # paths of finished take files, for the UI
        device_configs()                              # every device module registered

    @staticmethod
    def app_devices() -> list[tuple[str, type[DeviceConfig]]]:
        """The devices the window offers, by name, in a stable order."""
        configs = [(cfg.menu_order, name, cfg) for name, cfg in device_configs().items() if cfg.in_app]
        return [(name, cfg) for _, name, cfg in sorted(configs, key=lambda c: c[:2])]

    # -- UI-thread API (everything is queued) ---------------------------------------------------
    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        """Stop the loop; a take still recording is finished (the window is closing)."""
        self.loop.stop()
        if self.session is not None and self.session.recorder is not None:
            self.finished_takes.put(self.session.stop_recording(keep=True).path)
        self._disconnect()

    def snapshot(self) -> StationSnapshot:
        with self._lock:
            return self._snapshot

    def choose_task(self, task_id: str, done=None) -> None:
        """Build the task off-thread, then swap it in at the next tick."""
        def build():
            try:
                rt = TaskRuntime(task_id)
                bundle = _Bundle(rt, load_config().build(rt.sim.scene, profile=self.profile))
                self._commands.put(("swap", bundle))
            except TeleopError as exc:
                self._commands.put(("message", f"cannot load {task_id}: {exc}"))
            if done is not None:
                done()
        threading.Thread(target=build, name="task-builder", daemon=True).start()

    def choose_device(self, name: str, **options) -> None:
        self._commands.put(("device", (name, options)))

    def connect(self) -> None:
        self._commands.put(("connect", None))

    def disconnect(self) -> None:
        self._commands.put(("disconnect", None))

    def toggle_recording(self) -> None:
        self._commands.put(("record", None))

    def stop_recording(self, keep: bool = True) -> None:
        self._commands.put(("stop", keep))

    def next_episode(self) -> None:
        self._commands.put(("next", None))

    def engage(self, on: bool) -> None:
        self._commands.put(("engage", on))

    def set_profile(self, profile) -> None:
        """Use this operator profile from now on (rebuilds the retargeter at the next tick)."""
        self._commands.put(("profile", profile))

    def set_target(self, index: int, value: float) -> None:
        """Joint-panel target (used while no device is connected)."""
        self._commands.put(("target", (index, value)))

    def run_command(self, kind: str, arg=None) -> None:
        """Queue a raw command (tests use this to drive the loop deterministically)."""
        self._commands.put((kind, arg))

    # -- loop thread ----------------------------------------------------------------------------
    def _tick(self) -> None:
        while True:
            try:
                kind, arg = self._commands.get_nowait()
            except queue.Empty:
                break
            try:
                getattr(self, f"_cmd_{kind}")(arg)
            except TeleopError as exc:          # a bad request must never stop the loop
                self._message = str(exc)
            except Exception as exc:  # noqa: BLE001 - nor an unexpected failure (a device's, a file's)
                self._message = f"{kind} failed: {type(exc).__name__}: {exc}"
        report = None
        if self.session is not None and (self.device is not None or self._manual):
            report = self.session.tick()
        if report is not None and self.session.recorder is not None and report.done:
            self._finish_take(True)
        self._publish(report)

    def _publish(self, report) -> None:
        b, session = self._bundle, self.session
        recorder = session.recorder if session is not None else None
        snap = StationSnapshot(
            task_id=b.rt.spec.id if b else None, model_version=self._model_version,
            qpos=b.rt.sim.data.qpos.copy() if b else None, report=report, recording=recorder is not None,
            recorded_ticks=recorder.writer.ticks if recorder is not None else 0, episode_index=self.episode_index,
            device=self.device_config.name if self.device_config else None, connected=self.device is not None,
            frame_hz=self._frame_rate(), device_stats=self.device.stats() if self.device is not None else {},
            message=self._message, tracking=self._tracking(),
            last_frame=session.last_frame if session is not None else None,
            model=b.rt.sim.model if b else None, connection=self._connection)
        with self._lock:
            self._snapshot = snap

    def _tracking(self) -> dict:
        frame = self.session.last_frame if self.session is not None else None
        if frame is None:
            return {}
        return {side: (None if frame.hand(side) is None else frame.hand(side).tracked_fraction) for side in SIDES}

    def _frame_rate(self) -> float:
        """Device frames per second over the last second."""
        if self.session is None:
            return 0.0
        now = time.monotonic()
        count = self.session.frames_received
        self._frames_seen = [(t, c) for t, c in self._frames_seen if now - t < 1.0] + [(now, count)]
        (t0, c0), (t1, c1) = self._frames_seen[0], self._frames_seen[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0

    def _cmd_target(self, arg) -> None:
        index, value = arg
        if self.session is not None:
            self.session.set_target(index, value)
            self._manual = True

    def _cmd_profile(self, profile) -> None:
        self.profile = profile
        if self._bundle is not None:
            self._bundle.retargeter = load_config().build(self._bundle.rt.sim.scene, profile=profile)
            self.session.set_retargeter(self._bundle.retargeter)

    def _cmd_message(self, text: str) -> None:
        self._message = text

    def _on_take_finished(self, result) -> None:
        """(take-finisher thread) The file goes to the UI's queue; a failure becomes a message
        through the command queue: no other thread writes the station's state."""
        if isinstance(result, Exception):
            self._commands.put(("message", f"could not finish the take ({result}); it will be recovered on restart"))
        else:
            self.finished_takes.put(result)

    def _cmd_swap(self, bundle: _Bundle) -> None:
        self._finish_take(True)
        self._bundle = bundle
        self._model_version += 1
        self.episode_index = len(self.store.rows(task_id=bundle.rt.spec.id))
        self.session = Session(bundle.rt, bundle.retargeter)
        self._reset_episode(rebuild=self.device is not None)

    def _cmd_device(self, arg) -> None:
        name, options = arg
        config = device_config(name).from_options(**options)
        self._finish_take(True)
        self._disconnect()
        self.device_config = config

    def _cmd_connect(self, _arg) -> None:
        if self._bundle is None or self.device_config is None:
            raise TeleopError("choose a task and a device first")
        self._finish_take(True)
        self._disconnect()
        self._build_device()

    def _cmd_disconnect(self, _arg) -> None:
        self._finish_take(True)
        self._disconnect()

    def _cmd_record(self, _arg) -> None:
        if self.session is not None and self.session.recorder is not None:
            self._finish_take(True)
            return
        if self.session is None or self.device is None:
            raise TeleopError("connect a device before recording")
        if self.rt_ticks() > 0:
            # A take starts from a clean episode: its initial state is the reset state and every
            # piece of tick state is fresh, so its operator stream replays bit-exactly.
            self._reset_episode()
        meta = config_meta(None, None)
        self.session.start_recording(self.store, self.operator, self.seed_index, self.episode_index,
                                     device=self.device_config.name, **meta)

    def _cmd_stop(self, keep: bool) -> None:
        self._finish_take(keep)

    def _cmd_next(self, _arg) -> None:
        self._finish_take(True)
        self.episode_index += 1
        self._reset_episode()

    def _cmd_engage(self, on: bool) -> None:
        if self.session is not None:
            self.session.gate.request(on)

    # -- helpers (loop thread) ------------------------------------------------------------------
    def rt_ticks(self) -> int:
        """Control ticks since the episode's reset."""
        return self._bundle.rt.sim.tick if self._bundle is not None else 0

    def _reset_episode(self, rebuild: bool = False) -> None:
        """The next episode starts: the session's reset, and a device made for one episode is
        rebuilt from the reset scene (``rebuild`` forces it: a new task)."""
        self.session.reset(self.seed_index, self.episode_index)
        self._manual = False
        if self.device is not None and (rebuild or self.device_config.per_episode):
            self._disconnect()
            self._build_device()
        else:
            self.session.attach(self.device)

    def _build_device(self) -> None:
        b = self._bundle
        context = DeviceContext(b.rt, b.retargeter, realtime=True, episode_index=self.episode_index)
        device = self.device_config.build(context)
        device.connect()
        self.device, self._connection = device, device.connection_info()
        self.session.attach(device)

    def _disconnect(self) -> None:
        if self.device is not None:
            self.device.close()
        self.device, self._connection = None, None
        if self.session is not None:
            self.session.attach(None)

    def _finish_take(self, keep: bool) -> None:
        """Detach the recorder now; the session writes the final file on a worker thread (the loop
        never waits on disk); the file lands in ``finished_takes`` for the UI to index."""
        if self.session is not None and self.session.recorder is not None:
            self.session.stop_recording(keep, on_done=self._on_take_finished)
