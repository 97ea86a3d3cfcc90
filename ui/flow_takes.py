"""The flow's take handling: verdicts, and what happens to a finished take file when it arrives
(indexed, then reviewed — or continued after "back 3 s", or marked after a re-record). Reading a
take and compiling its model take ~0.1 s, so they run on a loader thread."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ui.review import prepare
from ui.take_flags import take_flags

BACK_S = 3.0


@dataclass(frozen=True)
class Verdict:
    take_id: str
    status: str
    reason: str
    episode_index: int


class TakeArrivals:
    # -- verdicts and review ----------------------------------------------------------------------
    def _verdict(self, status: str, reason: str) -> None:
        take = self.review.take
        take_id = take.meta.take_id
        if status == "accepted":              # validated once the decision is in the file
            self.writer.write(take_id, status, reason, take=take, after=lambda: self.validation.submit(take_id))
            self.status = f"{take_id}: accepted, validating…"
        else:
            self.writer.write(take_id, status, reason, take=take)
            self.status = f"{take_id}: rejected ({reason})"
        self.verdicts.append(Verdict(take_id, status, reason, take.meta.episode_index))
        self.rejecting, self._confirm_until = False, 0.0
        self._close_review()
        self.takes_changed.emit()

    def _close_review(self) -> None:
        self.rejecting, self.flags = False, []
        if self.review.take is not None:
            self.review.close()
            self.review_closed.emit()

    def collect(self, path) -> None:
        """A finished take file from the station: indexed, then reviewed (or continued, or
        marked, as the way it ended asks). Reading it and compiling its model happen off-thread."""
        self.open(path, self.station.stop_reasons.get(Path(path).stem, ""))

    def open(self, path, reason: str = "review") -> None:
        self._loading += 1

        def load():
            try:
                result = prepare(path)
            except Exception as exc:  # noqa: BLE001 - shown in the status line
                result = exc
            self._loaded.emit(path, result, reason)
        threading.Thread(target=load, name="take-loader", daemon=True).start()

    def _on_loaded(self, path, result, reason: str) -> None:
        self._loading -= 1
        if self.closed:                             # the window closed while the take was read
            return
        if isinstance(result, Exception):
            self.status = f"cannot open {Path(path).name}: {result}"
            self.changed.emit()
            return
        take, replayer = result
        take_id = take.meta.take_id
        if self.store.index.get(take_id) is None:   # a new take; a known one is kept by the review writer
            self.store.index.upsert(take)           # (the index is only touched on the UI thread)
        source = take.meta.continued_from.partition("@")[0]
        if source in self._superseded:          # the continuation replaces it (recoverable from the trash)
            self._superseded.discard(source)
            if self.store.index.get(source) is not None:
                self.store.delete(source)
        self.takes_changed.emit()
        if reason in ("re-record", "discarded"):
            self.writer.write(take_id, "rejected", "re-recorded" if reason == "re-record" else "discarded", take=take)
            self.takes_changed.emit()
        elif self._rewind_s is not None:
            tick = max(0, take.length - int(round(self._rewind_s * take.meta.control_hz)))
            self._rewind_s = None
            self._superseded.add(take_id)
            self.station.continue_take(take, tick)
            self._expect_take("rewind")
            self.status = f"back {BACK_S:.0f} s: recording on from {tick / take.meta.control_hz:.1f} s"
        elif self.station.snapshot().recording or self.review.take is not None:
            self.status = f"{take_id} recorded ({take.length / take.meta.control_hz:.1f} s)"
        else:
            self.review.load(take, replayer)
            self.flags = take_flags(take)
            self.review.set_speed(self.speed)
            self.review.play()                  # review plays by itself, at the remembered speed
            self.review_opened.emit(take)
        self.changed.emit()
