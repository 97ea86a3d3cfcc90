"""The ``Device`` interface, what it tells the operator (``ConnectionInfo``), and the latest-frame
slot / background reader every device uses. Devices are built by their configs (``devices.config``).

Every device: construct (no I/O) -> ``connect()`` (opens sockets, starts its reader) ->
``read()`` any number of times from the control loop (never blocks) -> ``close()``.
"""
from __future__ import annotations

import abc
import threading
import time
from collections import Counter
from dataclasses import dataclass
from collections.abc import Callable

from teleop.core.errors import ConfigError, TeleopError

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


class ActionQueue:
    """Operator actions from a device's reader thread to the control loop (``take``).

    Bounded: a device that floods presses (a bug, a stuck button) loses the oldest beyond
    ``MAX_PENDING_ACTIONS``, never the loop's memory; the loop drains it every tick (40 ms), so a
    real operator never comes close."""

    MAX_PENDING_ACTIONS = 32

    def __init__(self):
        self._lock = threading.Lock()
        self._items: list[tuple[str, object]] = []
        self.put_count = 0
        self.overflowed = 0

    def put(self, name: str, arg: object = None) -> None:
        with self._lock:
            self._items.append((name, arg))
            self.put_count += 1
            if len(self._items) > self.MAX_PENDING_ACTIONS:
                del self._items[0]
                self.overflowed += 1

    def take(self) -> list[tuple[str, object]]:
        with self._lock:
            items, self._items = self._items, []
        return items


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

    def stop(self, join_timeout: float = 5.0) -> bool:
        """Ask the thread to end and wait for it; False if it is still running (a poll that did
        not return in time: whatever it reads from must then stay open)."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(join_timeout)
        stopped = not self._thread.is_alive()
        self._thread = None
        return stopped

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


@dataclass(frozen=True)
class ConnectionInfo:
    """What a device tells the operator about its connection, shown by the app and the CLI.

    ``summary`` is one line ("listening on https://10.0.0.5:8443", "waiting for glove packets on
    tcp://…"); a headset adds the page URL (shown as a QR code too), its pairing code and the
    certificate fingerprint the operator checks on the headset.
    """
    summary: str
    url: str = ""
    pairing_code: str = ""
    fingerprint: str = ""

    def banner(self, qr: bool = True) -> str:
        """The same as text for a terminal (with the URL as a terminal QR code)."""
        lines = [self.summary]
        if self.url:
            lines.append(f"open on the headset: {self.url}")
        if self.pairing_code:
            lines.append(f"pairing code: {self.pairing_code}")
        if self.fingerprint:
            lines.append(f"certificate SHA-256: {self.fingerprint}")
        if qr and self.url:
            lines.append(qr_ascii(self.url))
        return "\n".join(lines)


def qr_ascii(text: str) -> str:
    """``text`` as a QR code drawn with characters (the UI renders ``qrcode`` images instead)."""
    import io

    import qrcode
    code = qrcode.QRCode(border=1)
    code.add_data(text)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()


class Device(abc.ABC):
    """Base class of operator devices; each is built by its registered ``DeviceConfig``."""

    @abc.abstractmethod
    def connect(self) -> None:
        """Open sockets / start the reader (the constructor does no I/O)."""

    @abc.abstractmethod
    def read(self) -> Reading:
        """The latest frame and its age; never blocks."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop the reader and release everything ``connect`` opened; safe to call twice."""

    @property
    @abc.abstractmethod
    def is_connected(self) -> bool:
        """``connect`` succeeded and ``close`` was not called."""

    @abc.abstractmethod
    def connection_info(self) -> ConnectionInfo:
        """Where and how the operator connects (meaningful once connected)."""

    @property
    def finished(self) -> bool:
        """The stream has nothing more to give (a played stream's end; a live device never)."""
        return False

    def stats(self) -> dict:
        """Counters for the UI / reports (accepted, dropped by reason, ...)."""
        return {}

    def take_actions(self) -> list[tuple[str, object]]:
        """Operator actions asked for on the device since the last call (a HUD button pinched, a
        glove button pressed), oldest first: ``(name, arg)`` with ``name`` one of
        ``teleop.core.conventions.OPERATOR_ACTIONS``. Never blocks; a device without buttons has none."""
        return []

    # Feedback channels. The control loop calls all of them every tick on any device; a device
    # without that channel ignores the call (no per-device special cases in the loop).
    def publish_haptics(self, forces) -> bool:
        """Fingertip contact forces (2, 5) N, rows left / right, thumb first."""
        return False

    def publish_scene(self, geoms: list[dict], world_to_operator=(0.0, 0.0, 0.0), hud_anchor=None) -> None:
        """Scene geometry (see ``devices.webxr.scene_msgs``), sent once and on reconnects;
        ``hud_anchor`` (world frame, optional): where a headset shows its HUD."""

    def publish_poses(self, poses: dict, seq: int | None = None) -> None:
        """Body poses, name -> (7,) x y z qw qx qy qz in the world frame, latest value wins."""

    def publish_hud(self, hud: dict) -> None:
        """HUD: instruction, recording, subtasks [{name, done}], status, engage, reason, ended, result."""

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
