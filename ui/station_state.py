"""What the station publishes to the window each tick: one immutable snapshot (never a live object
the loop thread still writes), with the notices that belong next to a panel."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from devices.base import ConnectionInfo
from teleop.control.device_faults import DeviceFault

PLACES = ("task", "device", "record", "loop")    # where a notice is shown in the window

# The device link, as the device panel and the overlay say it. Only LINKED states are "connected":
# a device that is open but has sent no frame is not (the robot cannot follow it).
LINKS = {"none": "no device", "connecting": "connecting…", "ready": "ready — starts on Record",
         "playing": "playing", "waiting": "open, no frames yet", "live": "receiving frames",
         "stale": "frames stopped"}
LINKED = ("ready", "playing", "live")


@dataclass(frozen=True)
class Notice:
    place: str                 # one of PLACES
    text: str
    level: str = "error"       # "error" | "info"
    seq: int = 0               # increases with every notice: the window shows each once


@dataclass(frozen=True)
class StationSnapshot:
    task_id: str | None
    model_version: int               # bumps when the task (so the model) changes
    qpos: np.ndarray | None
    report: object | None            # the last TickReport
    recording: bool
    recorded_ticks: int
    episode_index: int
    device: str | None
    connected: bool                  # the device is linked (frames flow, or a player is ready)
    device_stats: dict = field(default_factory=dict)
    frame_hz: float = 0.0
    message: str = ""                # the latest notice's text (any place)
    tracking: dict = field(default_factory=dict)   # side -> tracked fraction of the last frame (None: unseen)
    last_frame: object | None = None
    model: object | None = None      # the task's MjModel (compiled once, never written: safe to read)
    connection: ConnectionInfo | None = None
    link: str = "none"               # a key of LINKS
    fault: DeviceFault | None = None  # why the device is not (or no longer) linked
    notices: tuple[Notice, ...] = ()
    elapsed_s: float = 0.0           # of the take being recorded (its prefix included)
    remaining_s: float | None = None  # to the horizon, while recording
    stopping_in_s: float | None = None  # the auto-stop countdown once the task is done
    takes_started: int = 0
    takes_stopped: int = 0
    last_stop: str = ""              # why the last take ended: success, horizon, key, …
    resumed_from: tuple[str, int] | None = None   # (take id, tick) the recording continues
    armed: bool = False              # a clean episode waits for Record
    heartbeat: float = 0.0           # time.monotonic() at the end of this tick
    ticks: int = 0                   # loop ticks since the station started

    def notice(self, place: str) -> Notice | None:
        return next((n for n in self.notices if n.place == place), None)
