"""An episode's horizon: how many control ticks it runs, and from which tick they count.

Two things went wrong with a live headset: the task's horizon ran from server start, so an
operator still putting the headset on lost their time (30 s whether connected or not); and
``--max-seconds`` only capped the tick count while the scorer's own horizon still ended the
episode (``--max-seconds 40`` ran exactly the task's 750 ticks). Here the one horizon is
``--max-seconds`` when given, else the task's, and it is what the scorer ends the episode on;
for a device whose config says ``horizon_from_engage`` it starts at the first tick the operator
engaged (the gate left disengaged / arming), so the ticks before do not count.
"""
from __future__ import annotations

from dataclasses import dataclass

NOT_YET = 2**62                  # a scorer horizon no episode reaches: the clock has not started
WAITING = ("disengaged", "arming")


@dataclass
class EpisodeHorizon:
    ticks: int                   # the episode's length once its clock runs, in control ticks
    from_engage: bool
    start: int | None = None     # the first tick (TickReport.tick, 1-based) that counts

    def begin(self, scorer) -> None:
        """At the episode's start (after the session's reset): set the scorer's horizon."""
        self.start = None if self.from_engage else 1
        scorer.horizon = NOT_YET if self.from_engage else self.ticks

    def observe(self, report, scorer) -> None:
        """After each tick: start the clock on the operator's first engage."""
        if self.start is None and report.engage_state not in WAITING:
            self.start = report.tick
            # The scorer ends the episode once its step reaches the horizon: ticks start..start+n-1.
            scorer.horizon = self.start + self.ticks - 1

    def over(self, report) -> bool:
        """The clock ran out with ``report`` (the scorer marks that tick done as well)."""
        return self.start is not None and report.tick - self.start + 1 >= self.ticks
