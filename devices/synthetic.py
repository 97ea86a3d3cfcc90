"""The ``synthetic`` device: plays a scripted operator, ``stream(t, sequence, received)`` -> frame.

Two clocks: ``lockstep`` (each ``read()`` advances virtual time by ``dt``: deterministic, as fast
as the loop runs; used by tests, benchmarks and ``teleop record --device synthetic``) and
``realtime`` (a reader thread produces frames at ``rate_hz`` from the wall clock, like a headset).
The device knows nothing about robots: it only plays what the stream function returns.
``duration`` bounds the stream; ``end()`` (optional) is where a stream that learns its own length
as it plays (the closed-loop synthetic operator) says it ends (inf until it knows). ``on_read()``
(optional) is called on the thread that calls ``read()`` (the loop's), e.g. to hand the stream a
copy of the loop's state that a real-time reader thread may then read safely.
"""
from __future__ import annotations

import time
import math
from collections.abc import Callable

from devices.base import DeviceError, LatestFrame, Reading
from devices.player import PlayerDevice
from devices.frame import OperatorFrame
from teleop.core.errors import choices
from teleop.robot import default_control_hz

Stream = Callable[[float, int, float], OperatorFrame]
CLOCKS = ("lockstep", "realtime")


class SyntheticOperator(PlayerDevice):
    def __init__(self, stream: Stream, duration: float, clock: str = "lockstep", dt: float | None = None,
                 rate_hz: float = 60.0, stale_after: float = 0.2, end: Callable[[], float] | None = None,
                 on_read: Callable[[], None] | None = None):
        if clock not in CLOCKS:
            raise DeviceError(f"clock {clock!r} is not one of {choices(CLOCKS)}")
        self.stream, self.duration, self.clock = stream, duration, clock
        self._end, self._on_read = (lambda: math.inf) if end is None else end, on_read
        # lockstep: one frame per control tick (None: the shipped robot's control rate)
        self.dt, self.rate_hz = (1.0 / default_control_hz() if dt is None else dt), rate_hz
        self._slot = LatestFrame(stale_after)
        self._connected = False
        self._sequence = 0
        self._t0 = 0.0

    @property
    def finished(self) -> bool:
        elapsed = self._sequence * (self.dt if self.clock == "lockstep" else 1 / self.rate_hz)
        return elapsed > min(self.duration, self._end())

    def connect(self) -> None:
        self._connected = True
        self._sequence = 0
        self._t0 = time.monotonic()
        if self.clock == "realtime":
            self._start_reader("synthetic-operator", self._produce)

    def _produce(self, timeout: float) -> None:
        t = time.monotonic() - self._t0
        self._slot.put(self.stream(min(t, self.duration), self._sequence, time.monotonic()))
        self._sequence += 1
        time.sleep(max(0.0, self._t0 + self._sequence / self.rate_hz - time.monotonic()))

    def read(self) -> Reading:
        if not self._connected:
            raise DeviceError("synthetic operator: read() before connect()")
        if self._on_read is not None:
            self._on_read()
        if self.clock == "lockstep":
            t = min(self._sequence * self.dt, self.duration)
            frame = self.stream(t, self._sequence, time.monotonic())
            self._sequence += 1
            return Reading(frame, 0.0, False, self._sequence)
        return self._slot.get()

    def stats(self) -> dict:
        return {"frames": self._sequence}
