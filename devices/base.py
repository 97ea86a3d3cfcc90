"""The ``Device`` interface, the device registry and the latest-frame slot / background reader.

Every device: construct (no I/O) -> ``connect()`` (opens sockets, starts its reader) ->
``read()`` any number of times from the control loop (never blocks) -> ``close()``.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, ClassVar

from teleop.errors import ConfigError, TeleopError, choices

from devices.frame import OperatorFrame


class DeviceError(TeleopError):
    """A device could not connect or was used in the wrong state."""


@dataclass(frozen=True)
class Reading:
    """What ``Device.read()`` returns: the latest frame (or None), its age and staleness.

    ``age`` is seconds since the frame arrived (``inf`` when there is none); ``stale`` is True
    when there is no frame or it is older than the device's staleness timeout; ``index`` counts
    the frames the device accepted up to this one (a new frame <=> a new index, even when the
    device's own sequence number restarts).
    """
    frame: OperatorFrame | None
    age: float
    stale: bool
    index: int = 0


class LatestFrame:
    """A latest-value slot shared by a reader thread (``put``) and the control loop (``get``).

    Holding only the newest frame means a slow consumer never builds a backlog.
    """

    def __init__(self, stale_after: float, clock: Callable[[], float] = time.monotonic):
        if not stale_after > 0:
            raise ConfigError(f"stale_after must be > 0 seconds, got {stale_after!r}")
        self.stale_after = float(stale_after)
        self._clock = clock
        self._lock = threading.Lock()
        self._frame: OperatorFrame | None = None
        self.accepted = 0

    def put(self, frame: OperatorFrame) -> None:
        with self._lock:
            self._frame = frame
            self.accepted += 1

    def get(self) -> Reading:
        with self._lock:
            frame, index = self._frame, self.accepted
        if frame is None:
            return Reading(None, float("inf"), True, 0)
        age = max(0.0, self._clock() - frame.received)
        return Reading(frame, age, age > self.stale_after, index)


class DropCounter:
    """Counts rejected inputs by reason (thread-safe), so every input is accounted for."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def drop(self, reason: str) -> None:
        with self._lock:
            self._counts[reason] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())


class BackgroundReader:
    """One daemon thread calling ``poll(timeout_s)`` until stopped.

    ``poll`` does the blocking receive (with a short timeout so stop is prompt) and handles its
    own input; an exception escaping it is counted under ``errors`` and the thread keeps going,
    because one bad packet or hiccup must never kill a device.
    """

    def __init__(self, name: str, poll: Callable[[float], None], poll_timeout: float = 0.05):
        self.name = name
        self._poll = poll
        self._timeout = poll_timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0
        self.last_error: str = ""

    def start(self) -> None:
        if self._thread is not None:
            raise DeviceError(f"reader {self.name!r} already started")
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._poll(self._timeout)
            except Exception as exc:  # noqa: BLE001 - the reader must survive anything
                self.errors += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                time.sleep(self._timeout)

    def stop(self, join_timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(join_timeout)
            self._thread = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


class Device:
    """Base class of operator devices. Subclasses set ``type_name`` via ``@register_device``."""

    type_name: ClassVar[str] = ""

    def connect(self) -> None:
        raise NotImplementedError

    def read(self) -> Reading:
        """The latest frame and its age; never blocks."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @property
    def is_connected(self) -> bool:
        raise NotImplementedError

    def stats(self) -> dict:
        """Counters for the UI / reports (accepted, dropped by reason, ...)."""
        return {}

    # Feedback channels. The control loop calls all of them every tick on any device; a device
    # without that channel ignores the call (no per-device special cases in the loop).
    def publish_haptics(self, forces) -> bool:
        """Fingertip contact forces (2, 5) N, rows left / right, thumb first."""
        return False

    def publish_scene(self, geoms: list[dict], world_to_operator=(0.0, 0.0, 0.0)) -> None:
        """Scene geometry (see ``devices.webxr.scene_msgs``), sent once and on reconnects."""

    def publish_poses(self, poses: dict, seq: int | None = None) -> None:
        """Body poses, name -> (7,) x y z qw qx qy qz in the world frame, latest value wins."""

    def publish_hud(self, hud: dict) -> None:
        """HUD: instruction, recording, subtasks [{name, done}], status."""

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


DEVICES: dict[str, type[Device]] = {}


def register_device(name: str):
    """Class decorator adding a Device subclass to the registry under ``name``."""
    def decorate(cls: type[Device]) -> type[Device]:
        if name in DEVICES and DEVICES[name] is not cls:
            raise TeleopError(f"device type {name!r} registered twice")
        cls.type_name = name
        DEVICES[name] = cls
        return cls
    return decorate


def create_device(name: str, **options) -> Device:
    """Build (without connecting) the device registered as ``name`` with its options."""
    # Importing the modules registers the built-in devices (explicitly: works even where the
    # package was installed as a namespace package before it had an __init__).
    import devices.glove  # noqa: F401
    import devices.webxr  # noqa: F401
    try:
        cls = DEVICES[name]
    except KeyError:
        raise ConfigError(f"unknown device {name!r}; valid: {choices(sorted(DEVICES))}") from None
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"device {name!r}: bad options {sorted(options)}: {exc}") from None
