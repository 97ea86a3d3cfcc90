"""The ``replay`` device: plays a recorded OperatorFrame stream (one frame per control tick).

``lockstep`` returns the next recorded frame on each ``read()`` with the age and staleness that
were recorded, so a take re-retargeted with the same configuration gives bit-identical joint
targets; ``realtime`` plays the frames on their recorded schedule from a reader thread, so the
stream can drive a live session as if the operator were back.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from devices.base import DeviceError, LatestFrame, Reading
from devices.player import PlayerDevice
from devices.codec import FRAME_COLUMNS, vector_to_frame
from teleop.core.errors import choices
from teleop.robot import default_control_hz

CLOCKS = ("lockstep", "realtime")


class ReplayDevice(PlayerDevice):
    def __init__(self, frames: np.ndarray, ages: np.ndarray | None = None, stale: np.ndarray | None = None,
                 clock: str = "lockstep", dt: float | None = None, speed: float = 1.0, stale_after: float = 0.2):
        frames = np.asarray(frames, dtype=np.float64)
        if frames.ndim != 2 or frames.shape[1] != len(FRAME_COLUMNS):
            raise DeviceError(f"replay: frames must be (T, {len(FRAME_COLUMNS)}), got {frames.shape}")
        if clock not in CLOCKS:
            raise DeviceError(f"replay: clock {clock!r} is not one of {choices(CLOCKS)}")
        n = len(frames)
        self.frames = frames
        self.ages = np.zeros(n) if ages is None else np.asarray(ages, float)     # (T,) s; inf: no frame
        self.stale = np.zeros(n, bool) if stale is None else np.asarray(stale, bool)
        # the recorded frames are one per control tick (None: the shipped robot's control rate)
        self.clock, self.dt, self.speed = clock, (1.0 / default_control_hz() if dt is None else dt), speed
        self._slot = LatestFrame(stale_after)
        self._index = 0
        self._t0 = 0.0
        self._connected = False

    @property
    def finished(self) -> bool:
        return self._index >= len(self.frames)

    def connect(self) -> None:
        self._index, self._t0, self._connected = 0, time.monotonic(), True
        if self.clock == "realtime":
            self._start_reader("replay", self._produce)

    def _produce(self, timeout: float) -> None:
        due = int((time.monotonic() - self._t0) * self.speed / self.dt)
        while self._index <= min(due, len(self.frames) - 1):
            frame = vector_to_frame(self.frames[self._index])
            if frame is not None:
                self._slot.put(dataclasses.replace(frame, received=time.monotonic()))
            self._index += 1
        time.sleep(min(timeout, self.dt / self.speed / 2))

    def read(self) -> Reading:
        if not self._connected:
            raise DeviceError("replay: read() before connect()")
        if self.clock == "realtime":
            return self._slot.get()
        i = min(self._index, len(self.frames) - 1)
        self._index += 1
        frame = vector_to_frame(self.frames[i])
        if frame is None:
            return Reading(None, float("inf"), True, i)
        return Reading(frame, float(self.ages[i]), bool(self.stale[i]), i + 1)

    def stats(self) -> dict:
        return {"frames": len(self.frames), "played": self._index}
