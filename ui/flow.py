"""The operator's flow, two inputs per take: Record, then Accept.

    LIVE --Record--> RECORDING --auto-stop | Stop | End early--> FINISHING --file--> REVIEW (auto-plays)
    REVIEW --A--> accepted (validated in the background), the next episode armed --> LIVE
    REVIEW --R, then 1..7--> rejected with that reason, the same episode re-armed --> LIVE
    Ctrl+Z undoes the last verdict (the take back in review, its episode re-armed)
    <- re-record (recording: drop the take, record the episode again; review: reject it as re-recorded)
    -> end early (recording: stop and keep)     Backspace: back 3 s (recording: rewind and record on)
    C: continue from the review position (the take becomes its prefix plus what is recorded now)

Every input arrives at :meth:`FlowController.trigger` — the keys (``ui.keys``), the panel's
buttons, ``teleop bench flow`` and, through ``Station.request_action``, a headset or a glove — so
they all do the same thing in the same state. Record is refused outside LIVE: a late Space after
an auto-stop never makes a junk take.
"""
from __future__ import annotations

import time

from PyQt6.QtCore import QObject, pyqtSignal

from ui.record_panel import REJECT_REASONS, SPEEDS
from ui.flow_takes import BACK_S, TakeArrivals, Verdict

LIVE, STARTING, RECORDING, FINISHING, REVIEW = "LIVE", "STARTING", "RECORDING", "FINISHING", "REVIEW"
START_TIMEOUT_S = 1.5          # a Record the station refused (its notice says why) stops counting as pending
REWIND_TIMEOUT_S = 60.0        # re-simulating a long prefix takes a few seconds
CONFIRM_S = 4.0                # a flagged take is accepted by a second accept within this time


class FlowController(TakeArrivals, QObject):
    review_opened = pyqtSignal(object)       # the Take now under review
    review_closed = pyqtSignal()
    changed = pyqtSignal()                   # status, prompt or flags changed
    takes_changed = pyqtSignal()             # the store changed (the browser refreshes)
    _loaded = pyqtSignal(object, object, str)   # (path, (take, replayer) or exception, stop reason)

    def __init__(self, station, store, validation, review, settings, writer, parent=None):
        super().__init__(parent)
        self.station, self.store, self.validation = station, store, validation
        self.review, self.settings = review, settings
        self.writer = writer                       # ui.review_writer.ReviewWriter: verdicts off the UI thread
        self.inputs = 0
        self.verdicts: list[Verdict] = []
        self.status = ""
        self.flags: list[str] = []
        self.rejecting = False
        self._confirm_until = 0.0
        self._pending: tuple[str, float, int, int] | None = None   # (kind, since, takes started, notice seq)
        self._loading = 0
        self._rewind_s: float | None = None
        self._superseded: set[str] = set()     # takes replaced by their continuation (trashed when it lands)
        self.speed = float(settings.value("review/speed", 1.0))
        self.closed = False
        self._loaded.connect(self._on_loaded)

    # -- state ------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        if self.review.take is not None:
            return REVIEW
        snap = self.station.snapshot()
        if snap.recording:
            self._pending = None
            return RECORDING
        if self._loading or self.station.takes_pending() or not self.station.finished_takes.empty():
            return FINISHING
        if self._pending is not None:
            kind, since, started, seq = self._pending
            notice = snap.notice("record")
            refused = notice is not None and notice.seq > seq
            limit = REWIND_TIMEOUT_S if kind == "rewind" else START_TIMEOUT_S
            if snap.takes_started == started and not refused and time.monotonic() - since < limit:
                return STARTING
            self._pending = None
        return LIVE

    def trigger(self, name: str, arg=None) -> bool:
        """One operator input: run action ``name`` for the current state; False when it does
        nothing here (the status line says why)."""
        self.inputs += 1
        handler = getattr(self, f"_on_{name}", None)
        handled = bool(handler(arg)) if handler is not None else False
        self.changed.emit()
        return handled

    def _say(self, text: str) -> bool:
        self.status = text
        return False

    def _expect_take(self, kind: str) -> None:
        snap = self.station.snapshot()
        notice = snap.notice("record")
        self._pending = (kind, time.monotonic(), snap.takes_started, notice.seq if notice else 0)

    # -- actions ----------------------------------------------------------------------------------
    def _on_record(self, _arg) -> bool:
        mode = self.mode
        if mode == LIVE:
            self.station.start_recording()
            self._expect_take("start")
            return True
        if mode == RECORDING:
            self.station.stop_recording(True)
            return True
        if mode == REVIEW:
            return self._say("reviewing: A accepts, R rejects, <- re-records, Esc goes back to live")
        return self._say("the take is being finished — its review opens by itself")

    def _on_end_early(self, _arg) -> bool:
        if self.mode != RECORDING:
            return False
        self.station.stop_recording(True)
        return True

    def _on_rerecord(self, _arg) -> bool:
        mode = self.mode
        if mode == RECORDING:
            self.station.rerecord()
            self._expect_take("start")
            return True
        if mode == REVIEW:
            self._verdict("rejected", "re-recorded")
            self.station.rearm()
            return True
        return False

    def _on_back(self, seconds) -> bool:
        seconds = float(seconds or BACK_S)
        mode = self.mode
        if mode == RECORDING:
            self._rewind_s = seconds
            self.station.stop_recording(True)
            return True
        if mode == REVIEW:
            self.review.back(seconds)
            return True
        return False

    def _on_continue(self, tick) -> bool:
        """Record on from ``tick`` (default: the review position) of the take under review."""
        if self.mode != REVIEW:
            return False
        take = self.review.take
        tick = self.review.tick if tick is None else int(tick)
        self._superseded.add(take.meta.take_id)
        self._close_review()
        self.station.continue_take(take, tick)
        self._expect_take("rewind")
        self.status = f"continuing {take.meta.take_id} from {tick / take.meta.control_hz:.1f} s…"
        return True

    def _on_accept(self, _arg) -> bool:
        if self.mode != REVIEW:
            return False
        if self.flags and time.monotonic() > self._confirm_until:
            self._confirm_until = time.monotonic() + CONFIRM_S
            return self._say(f"flagged: {', '.join(self.flags)} — press A again to accept anyway")
        self._verdict("accepted", "")
        self.station.next_episode()
        return True

    def _on_reject(self, reason) -> bool:
        if self.mode != REVIEW:
            return False
        if reason:
            self._verdict("rejected", str(reason))
            self.station.rearm()
            return True
        self.rejecting = not self.rejecting
        return True

    def _on_reason(self, number) -> bool:
        if not self.rejecting or self.mode != REVIEW or not 1 <= int(number) <= len(REJECT_REASONS):
            return False
        return self._on_reject(REJECT_REASONS[int(number) - 1])

    def _on_undo(self, _arg) -> bool:
        if not self.verdicts:
            return self._say("no verdict to undo")
        if self.mode in (RECORDING, STARTING):
            return self._say("stop the take before undoing a verdict")
        verdict = self.verdicts.pop()
        self.validation.forget(verdict.take_id)
        path = self.store.path(verdict.take_id)
        self._loading += 1                   # FINISHING until the take is back in review
        self.writer.write(verdict.take_id, "recorded", "", after=lambda: (self._unhold(), self.open(path)))
        self.takes_changed.emit()
        self.station.set_episode(verdict.episode_index)
        self._close_review()
        self.status = f"{verdict.take_id}: {verdict.status} undone"
        return True

    def _unhold(self) -> None:
        self._loading -= 1

    def _on_next(self, _arg) -> bool:
        self._close_review()
        self.station.next_episode()
        return True

    def _on_live(self, _arg) -> bool:
        if self.rejecting:
            self.rejecting = False
            return True
        if self.mode != REVIEW:
            return False
        self._close_review()
        return True

    def _on_play(self, _arg) -> bool:
        if self.mode != REVIEW:
            return False
        self.review.toggle()
        return True

    def _on_speed(self, speed) -> bool:
        self.speed = float(speed)
        self.settings.setValue("review/speed", self.speed)
        self.review.set_speed(self.speed)
        return True

    def _on_faster(self, _arg) -> bool:
        return self._step_speed(+1)

    def _on_slower(self, _arg) -> bool:
        return self._step_speed(-1)

    def _step_speed(self, step: int) -> bool:
        values = [v for _, v in SPEEDS]
        i = min(range(len(values)), key=lambda k: abs(values[k] - self.speed))
        return self._on_speed(values[max(0, min(len(values) - 1, i + step))])

    def _on_engage(self, _arg) -> bool:
        self.station.engage(True)
        return True

