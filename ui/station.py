"""The collection station behind the window: one task, one device, one session, ticking at the control rate
on its own thread whatever the window is doing.

The UI thread never touches the session: it queues commands (run at the top of the next tick, in
the loop thread) and reads an immutable :class:`StationSnapshot`. Work that can take long —
building a task, preparing a rewind, opening a live device — runs on worker threads and is
swapped in by a command, so neither the window nor the loop stalls on it.

The station never dies of a device: a failing command, a device that cannot connect and one that
fails mid-tick each become a notice or a :class:`DeviceFault` for the window, and the loop runs
on with the previous device or none. (A loop thread that dies anyway is restarted by the
window's watchdog: :meth:`Station.restart_loop`.)
"""
from __future__ import annotations

import queue
import threading
import time

from devices.config import DeviceConfig, DeviceContext
from recordings.store import TakeStore
from retarget import load_config
from teleop.control.autostop import AutoStop
from teleop.control.device_faults import failed_while_running
from teleop.control.episode import device_configs
from teleop.control.loop import RealtimeLoop
from teleop.control.publish import DevicePublisher
from teleop.control.session import Session
from teleop.core.conventions import OPERATOR_ACTIONS
from teleop.core.errors import TeleopError, choices
from teleop.robot import SIDES, default_control_hz
from teleop.tasks import TaskRuntime
from ui.station_commands import StationCommands, _Bundle
from ui.station_devices import DeviceSlot
from ui.station_takes import StationTakes
from ui.station_state import LINKED, Notice, StationSnapshot

__all__ = ["Station", "StationSnapshot"]


class Station(StationTakes, StationCommands):
    def __init__(self, store: TakeStore, operator: str = "operator", seed_index: int = 0,
                 autostop_s: float | None = None):
        self.store, self.operator, self.seed_index = store, operator, seed_index
        self.autostop_s = autostop_s                  # None: teleop.control.autostop's default
        self._commands: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._bundle: _Bundle | None = None
        self.session: Session | None = None
        self.devices = DeviceSlot(lambda kind, arg: self._commands.put((kind, arg)))
        self.chosen: DeviceConfig | None = None       # the device the operator picked
        self.episode_index = 0
        self._model_version = 0
        self._notices: dict[str, Notice] = {}
        self._notice_seq = 0
        self._frames_seen: list[tuple[float, int]] = []
        self.profile = None                           # operator profile (None: the default)
        self._manual = False                         # joint-panel targets drive the robot (no device)
        self._autostop: AutoStop | None = None
        self._meta: dict | None = None
        self.takes_started = self.takes_stopped = 0
        self.takes_written = self.takes_failed = 0   # counted by the take-finisher thread
        self.last_stop = ""
        self.stop_reasons: dict[str, str] = {}        # take id -> why it ended (read by the window)
        self.heartbeat = time.monotonic()
        self.ticks = 0
        self.current = ""                             # the command being run (the watchdog names it)
        self.loop_restarts = 0
        self._snapshot = StationSnapshot(None, 0, None, None, False, 0, 0, None, False)
        self.loop = RealtimeLoop(self._tick, default_control_hz(), name="station")
        self.finished_takes: queue.Queue = queue.Queue()   # paths of finished take files, for the UI
        self.operator_actions: queue.Queue = queue.Queue()  # (name, arg) from devices, for the window
        self._hud_flow: dict = {}                     # the window's flow for the device's HUD
        self._display: tuple[str, object] | None = None   # (model fingerprint, qpos) shown instead of live
        device_configs()                              # every device module registered

    @staticmethod
    def app_devices() -> list[tuple[str, type[DeviceConfig]]]:
        """The devices the window offers, by name, in a stable order."""
        configs = [(cfg.menu_order, name, cfg) for name, cfg in device_configs().items() if cfg.in_app]
        return [(name, cfg) for _, name, cfg in sorted(configs, key=lambda c: c[:2])]

    @property
    def device(self):
        return self.devices.device

    @property
    def device_config(self) -> DeviceConfig | None:
        return self.devices.config or self.chosen

    # -- any thread -----------------------------------------------------------------------------
    def start(self) -> None:
        self.loop.start()

    def stop(self, keep: bool = True) -> None:
        """Stop the loop; a take still recording is finished (``keep``) or kept as interrupted
        (the window is closing)."""
        self.loop.stop()
        if self.session is not None and self.session.recorder is not None:
            self.finished_takes.put(self.session.stop_recording(keep=keep).path)
        self.devices.close_now()

    def restart_loop(self) -> bool:
        """Start a fresh loop thread if the current one has died (never while it runs)."""
        if self.loop.running:
            return False
        error = self.loop.error
        self.loop = RealtimeLoop(self._tick, 25.0, name="station")
        self.loop_restarts += 1
        self._commands.put(("message", ("loop", f"the control loop stopped ({type(error).__name__}: {error}) "
                                                "and was restarted")))
        self.loop.start()
        return True

    def takes_pending(self) -> bool:
        """A stopped take whose file is not written yet (its review is coming)."""
        return self.takes_stopped > self.takes_written + self.takes_failed

    def snapshot(self) -> StationSnapshot:
        with self._lock:
            return self._snapshot

    def request_action(self, name: str, arg=None) -> None:
        """An operator action from anywhere but the keyboard (a headset button, a glove gesture):
        the window runs it through the same path its keys use (``ui.flow``)."""
        self.operator_actions.put((name, arg))

    def set_hud_flow(self, flow: dict) -> None:
        """What the window's flow adds to the device's HUD (mode, times, counts, buttons:
        ``ui.hud_flow``); kept until replaced. Any thread."""
        with self._lock:
            self._hud_flow = dict(flow)

    def show_pose(self, fingerprint: str | None, qpos=None) -> None:
        """Show the device this robot pose instead of the live one (the take under review; its
        model's ``fingerprint`` must be the live model's), or the live robot again (None). Any thread."""
        with self._lock:
            self._display = None if fingerprint is None or qpos is None else (fingerprint, qpos.copy())

    def choose_task(self, task_id: str, done=None) -> None:
        """Build the task off-thread, then swap it in at the next tick."""
        def build():
            try:
                if self._meta is None:                # read off the loop thread, once
                    self._meta = self._take_meta()
                rt = TaskRuntime(task_id)
                self._commands.put(("swap", _Bundle(rt, load_config().build(rt.sim.scene, profile=self.profile))))
            except TeleopError as exc:
                self._commands.put(("message", ("task", f"cannot load {task_id}: {exc}")))
            except Exception as exc:  # noqa: BLE001 - a broken task file must not leave the window waiting
                self._commands.put(("message", ("task", f"cannot load {task_id}: {type(exc).__name__}: {exc}")))
            if done is not None:
                done()
        threading.Thread(target=build, name="task-builder", daemon=True).start()

    def continue_take(self, take, tick: int, done=None) -> None:
        """Rewind ``take`` to ``tick`` and record on from there (a new take: its prefix plus the
        new ticks). The prefix is re-simulated on a worker thread, then swapped in."""
        def prepare():
            try:
                rt = TaskRuntime(take.meta.task_id)
                bundle = _Bundle(rt, load_config().build(rt.sim.scene, profile=self.profile))
                session = Session(rt, bundle.retargeter)
                session.resume(take, tick)
                self._commands.put(("resume", (bundle, session, take, tick)))
            except Exception as exc:  # noqa: BLE001 - reported next to the recording controls
                self._commands.put(("message", ("record", f"cannot continue {take.meta.take_id} at tick {tick}: "
                                                          f"{exc}")))
            if done is not None:
                done()
        threading.Thread(target=prepare, name="rewind", daemon=True).start()

    # -- loop thread ----------------------------------------------------------------------------
    def _tick(self) -> None:
        self._run_commands()
        self._feed_publishers()
        report = self._step()
        self._take_device_actions()
        if report is not None and self.session.recorder is not None:
            reason = self._autostop.update(report.score) if self._autostop is not None else None
            if reason is not None:
                self._finish_take(True, reason)
        try:
            self._publish(report)
        except Exception as exc:  # noqa: BLE001 - the previous snapshot stays; the loop goes on
            self._note("loop", f"could not publish the state: {type(exc).__name__}: {exc}")
        self.ticks += 1
        self.heartbeat = time.monotonic()

    def _run_commands(self) -> None:
        while True:
            try:
                kind, arg = self._commands.get_nowait()
            except queue.Empty:
                return
            self.current = kind
            try:
                getattr(self, f"_cmd_{kind}")(arg)
            except TeleopError as exc:          # a bad request must never stop the loop
                self._note(self._place_of(kind), str(exc))
            except Exception as exc:  # noqa: BLE001 - nor an unexpected failure (a device's, a file's)
                self._note(self._place_of(kind), f"{kind} failed: {type(exc).__name__}: {exc}")
            self.current = ""

    def _step(self):
        """One session tick when something drives the robot; a failure drops the device, not the loop."""
        slot = self.devices
        if self.session is None or not (slot.started or self._manual):
            return None
        try:
            report = self.session.tick()
        except Exception as exc:  # noqa: BLE001 - a device (or its frame) broke the tick
            config = slot.config
            self._finish_take(True, "device failed")
            slot.failed(failed_while_running(config, exc))
            self.session.attach(None)
            self._manual = False
            return None
        if slot.started:
            slot.observe(self.session.frames_received)
        return report

    def _feed_publishers(self) -> None:
        """The window's flow and review pose into this tick's device publishers."""
        session, b = self.session, self._bundle
        if session is None or b is None:
            return
        with self._lock:
            flow, display = self._hud_flow, self._display
        qpos = display[1] if display is not None and display[0] == b.rt.sim.scene.fingerprint else None
        for publisher in session.publishers:
            if isinstance(publisher, DevicePublisher):
                publisher.hud_extra, publisher.display_qpos = flow, qpos

    def _take_device_actions(self) -> None:
        """Buttons pressed on the device since the last tick -> the window's flow (the keys' path).
        A name outside the shared list is a device bug: said once per press, never run."""
        slot = self.devices
        if not slot.started or slot.device is None:
            return
        try:
            actions = slot.device.take_actions()
        except Exception as exc:  # noqa: BLE001 - a device's bug must not stop the loop
            self._note("device", f"could not read the device's buttons: {type(exc).__name__}: {exc}")
            return
        for name, arg in actions:
            if name in OPERATOR_ACTIONS:
                self.request_action(name, arg)
            else:
                self._note("device", f"the device asked for {name!r}, not an operator action; "
                                     f"valid: {choices(OPERATOR_ACTIONS)}")

    def _note(self, place: str, text: str, level: str = "error") -> None:
        self._notice_seq += 1
        self._notices[place] = Notice(place, text, level, self._notice_seq)

    def _clear(self, place: str) -> None:
        self._notices.pop(place, None)

    def _publish(self, report) -> None:
        b, session, slot = self._bundle, self.session, self.devices
        recorder = session.recorder if session is not None else None
        tick = b.rt.sim.tick if b else 0
        auto = self._autostop if recorder is not None else None
        notices = tuple(sorted(self._notices.values(), key=lambda n: n.seq))
        link = slot.link()
        snap = StationSnapshot(
            task_id=b.rt.spec.id if b else None, model_version=self._model_version,
            qpos=b.rt.sim.data.qpos.copy() if b else None, report=report, recording=recorder is not None,
            recorded_ticks=recorder.writer.ticks if recorder is not None else 0, episode_index=self.episode_index,
            device=self.device_config.name if self.device_config else None, connected=link in LINKED,
            frame_hz=self._frame_rate(), device_stats=slot.device.stats() if slot.started else {},
            message=notices[-1].text if notices else "", tracking=self._tracking(),
            last_frame=session.last_frame if session is not None else None,
            model=b.rt.sim.model if b else None, connection=slot.info, link=link, fault=slot.fault,
            notices=notices, elapsed_s=(recorder.writer.ticks if recorder else 0) * self._dt(),
            remaining_s=auto.remaining(tick) if auto else None, stopping_in_s=auto.stopping_in(tick) if auto else None,
            takes_started=self.takes_started, takes_stopped=self.takes_stopped, last_stop=self.last_stop,
            resumed_from=session.resumed_from if recorder is not None else None,
            armed=link == "ready" and tick == 0, heartbeat=time.monotonic(), ticks=self.ticks)
        with self._lock:
            self._snapshot = snap

    def _dt(self) -> float:
        return self._bundle.rt.sim.scene.control_dt if self._bundle is not None else 0.04

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
        return max(0.0, (c1 - c0) / (t1 - t0)) if t1 > t0 else 0.0

    # -- helpers (loop thread) ------------------------------------------------------------------
    def rt_ticks(self) -> int:
        """Control ticks since the episode's reset."""
        return self._bundle.rt.sim.tick if self._bundle is not None else 0

    def _context(self, live: bool = False) -> DeviceContext:
        """What building a device may use. A live device is built on the connector thread, so it
        gets no runtime (the loop thread owns it). A player keeps its natural clock: the synthetic
        operator's lock-step advances with the loop's ticks, so on a loaded machine it slows down
        with the robot (as an operator watching it would) instead of running ahead of it."""
        b = self._bundle
        if live or b is None:
            return DeviceContext(None, None, realtime=True, episode_index=self.episode_index)
        return DeviceContext(b.rt, b.retargeter, realtime=None, episode_index=self.episode_index)

    def _reset_episode(self) -> None:
        """The next episode starts: the session's reset; a player is re-planned from the reset
        scene and waits for Record (armed); a live device drives the new episode at once."""
        self.session.reset(self.seed_index, self.episode_index)
        self._manual = False
        self._arm_device()

    def _arm_device(self) -> None:
        slot = self.devices
        if slot.is_player and slot.device is not None:
            slot.prepare_player(slot.config, self._context())
            self.session.attach(None)
        elif slot.started:
            self.session.attach(slot.device)
        else:
            self.session.attach(None)
