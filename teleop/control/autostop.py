"""When a take ends by itself: a moment after the task is done, or at the horizon.

"Done" is the scorer's strict success at this tick (every subtask latched, the must-hold ones
holding, none violated) — what validation will demand of the replay's last tick. Waiting
``settle_s`` with it still true before stopping keeps the operator's release in the take and
makes sure the last tick is a success, not a passing one. The horizon (or a distractor grasp)
ends the take whatever its state. Both come with a countdown for the operator's display.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SETTLE_S = 1.0


@dataclass
class AutoStop:
    horizon: int                       # the scorer's horizon (ticks since the episode's start)
    dt: float                          # seconds per tick
    settle_s: float = DEFAULT_SETTLE_S
    _success_since: int | None = None

    def reset(self) -> None:
        self._success_since = None

    def update(self, score) -> str | None:
        """Feed one tick's ``TickScore``; the reason to stop now ("success", "horizon",
        "distractor:<name>") or None."""
        if score.done:
            return score.terminated_by or "horizon"
        if not score.strict_success:
            self._success_since = None
            return None
        if self._success_since is None:
            self._success_since = score.step
        if (score.step - self._success_since) * self.dt >= self.settle_s:
            return "success"
        return None

    def stopping_in(self, step: int) -> float | None:
        """Seconds until the success stop (None: the task is not done)."""
        if self._success_since is None:
            return None
        return max(0.0, self.settle_s - (step - self._success_since) * self.dt)

    def remaining(self, step: int) -> float:
        """Seconds to the horizon."""
        return max(0.0, (self.horizon - step) * self.dt)
