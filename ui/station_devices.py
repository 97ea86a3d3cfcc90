"""The station's device: its lifecycle and its link, owned by the loop thread.

Two kinds of device (their config's ``per_episode``):

- **players** (the synthetic operator, a replay) are planned from an episode's reset scene. They
  are built when the episode is armed and connected only on Record, so the operator's script
  starts with the take; building is milliseconds, so it happens on the loop thread.
- **live devices** (glove, headset) open sockets and servers: connecting can block or fail in
  many ways, so it happens on a connector thread that posts the result back as a command. The
  loop never waits on a device and never reads one that is being opened or closed.

A live device counts as linked only once its first frame has arrived: a glove with nothing
publishing is "open, no frames yet", never "connected". A failure to connect leaves the previous
device running (it is re-opened when the new one needed its resources) and says why.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from devices.base import ConnectionInfo
from devices.config import DeviceConfig, DeviceContext
from teleop.control.device_faults import DeviceFault, explain, frames_stopped, no_frames

STALE_S = 1.0             # no new frame for this long: "frames stopped"
FAULT_AFTER_S = 3.0       # open without frames (or stopped) this long: say why in the panel


def close_quietly(device) -> None:
    try:
        device.close()
    except Exception:  # noqa: BLE001 - a device failing to close must not take anything else down
        pass


def close_in_background(device) -> None:
    """Close a live device off the loop thread (a ZeroMQ context or a server can take a while)."""
    threading.Thread(target=close_quietly, args=(device,), name="device-closer", daemon=True).start()


def open_device(config: DeviceConfig, context: DeviceContext):
    """Build and connect; a half-open device is closed before the error propagates."""
    device = config.build(context)
    try:
        device.connect()
    except BaseException:
        close_quietly(device)
        raise
    return device, device.connection_info()


class DeviceSlot:
    def __init__(self, post: Callable[[str, object], None]):
        self.post = post                         # queue a command for the loop thread (any thread)
        self.config: DeviceConfig | None = None  # the device in use, or being connected
        self.device = None
        self.started = False                     # connected and driving the session
        self.info: ConnectionInfo | None = None
        self.fault: DeviceFault | None = None
        self.connecting = False
        self._token = 0
        self._frames, self._frame_t, self._opened_t = 0, 0.0, 0.0

    # -- state --------------------------------------------------------------------------------------
    @property
    def is_player(self) -> bool:
        return self.config is not None and self.config.per_episode

    def link(self) -> str:
        if self.connecting:
            return "connecting"
        if self.device is None:
            return "none"
        if self.is_player:
            return "playing" if self.started else "ready"
        if self._frames == 0:
            return "waiting"
        return "stale" if time.monotonic() - self._frame_t > STALE_S else "live"

    def observe(self, frames_received: int) -> None:
        """After each tick: the device's frame counter; raises the no-frames faults in time."""
        now = time.monotonic()
        if frames_received != self._frames:
            self._frames, self._frame_t = frames_received, now
            if self.fault is not None and self.fault.what.endswith(("sends nothing", "stopped sending")):
                self.fault = None
        if self.is_player or not self.started:
            return
        if self._frames == 0 and now - self._opened_t > FAULT_AFTER_S and self.fault is None:
            self.fault = no_frames(self.config, now - self._opened_t, self.info)
        elif self._frames and now - self._frame_t > FAULT_AFTER_S and self.fault is None:
            self.fault = frames_stopped(self.config, now - self._frame_t)

    def _installed(self, config, device, info) -> None:
        self.config, self.device, self.info = config, device, info
        self.started = False
        self._frames, self._frame_t, self._opened_t = 0, 0.0, time.monotonic()

    # -- players (loop thread) ----------------------------------------------------------------------
    def prepare_player(self, config: DeviceConfig, context: DeviceContext) -> None:
        """Build (plan) a player for the current episode; it starts on :meth:`start_player`. A
        build that fails leaves the current device as it was."""
        device = config.build(context)
        self.release()
        self._installed(config, device, None)

    def start_player(self) -> None:
        self.device.connect()
        self.started, self.info = True, self.device.connection_info()

    # -- live devices -------------------------------------------------------------------------------
    def connect_live(self, config: DeviceConfig, context: DeviceContext, fallback: DeviceConfig | None) -> None:
        """Close the current device and open ``config``'s on the connector thread; on failure
        re-open ``fallback`` (a live device) so the station keeps the device it had."""
        self._token += 1
        token, old = self._token, self.device
        self.device, self.started, self.config, self.info, self.connecting = None, False, config, None, True

        def work():
            if old is not None:
                close_quietly(old)             # the new device may need its ports
            try:
                device, info = open_device(config, context)
            except Exception as exc:  # noqa: BLE001 - every failure is reported, none escapes
                fault, kept = explain(config, exc), None
                if fallback is not None and not fallback.per_episode:
                    try:
                        kept = (fallback, *open_device(fallback, context))
                    except Exception:  # noqa: BLE001 - then no device: the fault says why
                        kept = None
                self.post("attach_failed", (token, fault, kept))
                return
            self.post("attach", (token, config, device, info))
        threading.Thread(target=work, name="device-connector", daemon=True).start()

    def attach(self, token: int, config, device, info) -> bool:
        """(loop thread) The connector's device, unless a newer request superseded it."""
        if token != self._token:
            close_in_background(device)
            return False
        self.connecting, self.fault = False, None
        self._installed(config, device, info)
        self.started = True
        return True

    def attach_failed(self, token: int, fault: DeviceFault, kept) -> bool:
        """(loop thread) Connecting failed: the fault, and the previous device if it was kept."""
        if token != self._token:
            if kept is not None:
                close_in_background(kept[1])
            return False
        self.connecting, self.config, self.fault = False, None, fault
        if kept is not None:
            self._installed(*kept)
            self.started = True
            self.fault = DeviceFault(fault.what, fault.why, f"{fault.hint} (still using {kept[0].label})",
                                     fault.when)
        return True

    # -- both ---------------------------------------------------------------------------------------
    def failed(self, fault: DeviceFault) -> None:
        """The running device failed: drop it (closed off the loop thread) and keep the reason."""
        device, self.device, self.started = self.device, None, False
        self.fault = fault
        if device is not None:
            close_in_background(device)

    def release(self) -> None:
        """Close the current device (a player inline: it holds no sockets)."""
        device, player = self.device, self.is_player
        self.device, self.started, self.info = None, False, None
        self._token += 1                          # a connection still in flight is dropped on arrival
        self.connecting = False
        if device is not None:
            close_quietly(device) if player else close_in_background(device)

    def close_now(self) -> None:
        """Close synchronously (the station is stopping)."""
        device, self.device, self.started = self.device, None, False
        self._token += 1
        if device is not None:
            close_quietly(device)
