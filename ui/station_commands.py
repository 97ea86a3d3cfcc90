"""The station's commands: queued from any thread by the methods at the top, run in the loop
thread by the ``_cmd_*`` methods below at the top of the next tick (one command at a time, so
none needs a lock). Every operator input — a key, a button, a headset or glove action routed by
``ui.flow`` — ends up as one of these."""
from __future__ import annotations

from dataclasses import dataclass

from devices.config import device_config
from retarget import load_config
from teleop.control.device_faults import DeviceFault, explain
from teleop.core.errors import TeleopError
from teleop.control.session import Session
from teleop.tasks import TaskRuntime

PLACE_OF = {"swap": "task", "device": "device", "connect": "device", "disconnect": "device", "attach": "device",
            "attach_failed": "device", "profile": "device", "engage": "device"}


@dataclass
class _Bundle:
    rt: TaskRuntime
    retargeter: object


class StationCommands:
    # -- queued from the UI thread ----------------------------------------------------------------
    def choose_device(self, name: str, **options) -> None:
        self._commands.put(("device", (name, options)))

    def connect(self) -> None:
        self._commands.put(("connect", None))

    def disconnect(self) -> None:
        self._commands.put(("disconnect", None))

    def toggle_recording(self) -> None:
        self._commands.put(("record", None))

    def start_recording(self) -> None:
        """Record (a no-op while recording: a late key press never starts a second take)."""
        self._commands.put(("start", None))

    def stop_recording(self, keep: bool = True) -> None:
        """Stop and keep (or abort) the take being recorded (a no-op when none is)."""
        self._commands.put(("stop", keep))

    def next_episode(self) -> None:
        self._commands.put(("next", None))

    def rearm(self) -> None:
        """The same episode again from its clean reset (after a rejection, or to re-record)."""
        self._commands.put(("episode", None))

    def set_episode(self, index: int) -> None:
        """Arm episode ``index`` (an undone verdict goes back to the episode it was recorded in)."""
        self._commands.put(("episode", int(index)))

    def rerecord(self) -> None:
        """Drop the take being recorded and record the same episode again at once."""
        self._commands.put(("rerecord", None))

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

    # -- run in the loop thread -------------------------------------------------------------------
    @staticmethod
    def _place_of(kind: str) -> str:
        return PLACE_OF.get(kind, "record")

    def _cmd_message(self, arg) -> None:
        place, text = arg if isinstance(arg, tuple) else ("loop", arg)
        self._note(place, text)

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

    def _cmd_swap(self, bundle: _Bundle) -> None:
        self._finish_take(True, "task changed")
        self._bundle = bundle
        self._model_version += 1
        self.episode_index = len(self.store.rows(task_id=bundle.rt.spec.id))
        self.session = Session(bundle.rt, bundle.retargeter)
        self._clear("task")
        self._reset_episode()

    def _cmd_device(self, arg) -> None:
        name, options = arg
        self.chosen = device_config(name).from_options(**options)

    def _cmd_connect(self, _arg) -> None:
        if self.chosen is None:
            raise TeleopError("choose a device first")
        slot, config = self.devices, self.chosen
        self._finish_take(True, "device changed")
        previous = slot.config if slot.device is not None else None
        if self.session is not None:
            self.session.attach(None)
        self._clear("device")
        slot.fault = None
        self._fallback = previous
        if not config.per_episode:
            slot.connect_live(config, self._context(live=True), fallback=previous)
            return
        try:
            if self._bundle is None:
                raise TeleopError(f"choose a task first: {config.label} plans from the task's episode")
            slot.prepare_player(config, self._context())
        except Exception as exc:  # noqa: BLE001 - the fault says why; the previous device stays
            fault = explain(config, exc)
            if slot.started and self.session is not None:
                self.session.attach(slot.device)
                fault = DeviceFault(fault.what, fault.why, f"{fault.hint} (still using {slot.config.label})")
            slot.fault = fault
            return
        if self.rt_ticks() > 0:
            self._reset_episode()                 # a clean, armed episode for the new player

    def _cmd_attach(self, arg) -> None:
        token, config, device, info = arg
        if self.devices.attach(token, config, device, info) and self.session is not None:
            self.session.attach(device)

    def _cmd_attach_failed(self, arg) -> None:
        token, fault, kept = arg
        slot = self.devices
        if not slot.attach_failed(token, fault, kept):
            return
        previous = getattr(self, "_fallback", None)
        if kept is None and previous is not None and previous.per_episode and self._bundle is not None:
            slot.prepare_player(previous, self._context())     # back to the player it had
            slot.fault = DeviceFault(fault.what, fault.why, f"{fault.hint} (still using {previous.label})")
            if self.rt_ticks() > 0:
                self._reset_episode()
        elif kept is not None and self.session is not None:
            self.session.attach(slot.device)

    def _cmd_disconnect(self, _arg) -> None:
        self._finish_take(True, "disconnected")
        self.devices.release()
        self.devices.fault = None
        if self.session is not None:
            self.session.attach(None)

    def _cmd_record(self, _arg) -> None:
        if self.session is not None and self.session.recorder is not None:
            self._finish_take(True, "key")
            return
        self._start_take()

    def _cmd_start(self, _arg) -> None:
        if self.session is None or self.session.recorder is None:
            self._start_take()

    def _cmd_stop(self, keep: bool) -> None:
        self._finish_take(keep, "key" if keep else "discarded")

    def _cmd_rerecord(self, _arg) -> None:
        recording = self.session is not None and self.session.recorder is not None
        self._finish_take(False, "re-record")
        if self.session is not None:
            self._reset_episode()
        if recording:
            self._start_take()

    def _cmd_next(self, _arg) -> None:
        self._finish_take(True, "next")
        self.episode_index += 1
        if self.session is not None:
            self._reset_episode()

    def _cmd_episode(self, index) -> None:
        self._finish_take(True, "episode changed")
        if index is not None:
            self.episode_index = index
        if self.session is not None:
            self._reset_episode()

    def _cmd_engage(self, on: bool) -> None:
        if self.session is not None:
            self.session.gate.request(on)

    def _cmd_resume(self, arg) -> None:
        """A rewound session prepared off-thread: swap it in and record its prefix plus what follows."""
        bundle, session, take, tick = arg
        self._finish_take(True, "rewind")
        self._bundle, self.session = bundle, session
        self._model_version += 1
        self.episode_index = take.meta.episode_index
        self._manual = False
        slot = self.devices
        if slot.is_player and slot.device is not None:
            slot.prepare_player(slot.config, self._context())   # planned from the state at ``tick``
        self._begin_recording()
        if slot.is_player and slot.device is not None:
            slot.start_player()
        if slot.started:
            session.attach(slot.device)
