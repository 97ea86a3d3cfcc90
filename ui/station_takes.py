"""The station's takes (loop thread): starting one from a clean episode, finishing one without
waiting on disk, and the metadata every take of the station shares."""
from __future__ import annotations

from recordings.horizon import store_horizon
from recordings.take import software_versions
from teleop.control.autostop import AutoStop
from teleop.control.device_faults import no_frames
from teleop.control.episode import config_meta
from teleop.core.errors import TeleopError
from ui.station_state import LINKED


class StationTakes:
    def _start_take(self) -> None:
        slot, session = self.devices, self.session
        if session is None:
            raise TeleopError("choose a task before recording")
        link = slot.link()
        if link == "waiting":
            fault = slot.fault or no_frames(slot.config, 0.0, slot.info)
            raise TeleopError(f"nothing to record: {slot.config.label} has sent no frames yet — {fault.hint}")
        if link not in LINKED and link != "stale":
            raise TeleopError("connect a device before recording")
        if slot.is_player and (slot.started or self.rt_ticks() > 0):
            self._reset_episode()                # a clean episode, the operator's script from its start
        elif self.rt_ticks() > 0:
            # A take starts from a clean episode: its initial state is the reset state and every
            # piece of tick state is fresh, so its operator stream replays bit-exactly.
            self._reset_episode()
        self._begin_recording()
        if slot.is_player:                       # its clock starts now, after the journal is open
            slot.start_player()
            session.attach(slot.device)

    @staticmethod
    def _take_meta() -> dict:
        """What every take of this station records about its software: the retarget
        configuration's text (a YAML parse) and the package versions (an importlib.metadata
        scan) — 0.1–0.4 s together, so computed once, off the loop thread, not at every Record."""
        return {**config_meta(None, None), "software": software_versions()}

    def _begin_recording(self) -> None:
        rt = self._bundle.rt
        if self._meta is None:
            self._meta = self._take_meta()
        self.session.start_recording(self.store, self.operator, self.seed_index, self.episode_index,
                                     device=self.device_config.name if self.device_config else "none",
                                     **self._meta)
        # The take's horizon learns from this store's accepted takes of the task (recordings.horizon).
        rt.scorer.horizon = store_horizon(self.store.index, rt.spec, rt.task.scene.params.physics.control_hz)
        self._autostop = AutoStop(rt.scorer.horizon, rt.sim.scene.control_dt,
                                  **({} if self.autostop_s is None else {"settle_s": self.autostop_s}))
        self.takes_started += 1
        self._clear("record")

    def _on_take_finished(self, result) -> None:
        """(take-finisher thread) The file goes to the UI's queue; a failure becomes a notice
        through the command queue: no other thread writes the station's state."""
        if isinstance(result, Exception):
            self.takes_failed += 1
            self._commands.put(("message", ("record", f"could not finish the take ({result}); it will be "
                                                      "recovered on restart")))
        else:
            self.finished_takes.put(result)
            self.takes_written += 1

    def _finish_take(self, keep: bool, reason: str = "key") -> None:
        """Detach the recorder now; the session writes the final file on a worker thread (the loop
        never waits on disk); the file lands in ``finished_takes`` for the UI to index."""
        if self.session is not None and self.session.recorder is not None:
            self.stop_reasons[self.session.recorder.take_id] = reason
            self.session.stop_recording(keep, on_done=self._on_take_finished)
            self.takes_stopped += 1
            self.last_stop = reason
            self._autostop = None
