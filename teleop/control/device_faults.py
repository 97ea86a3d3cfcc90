"""What went wrong with a device, in the operator's words: what happened, why, what to try.

A device fails in many ways (a malformed address, a port another program holds, a device that is
open but sends nothing, one that dies mid-take) and the raw exception rarely says which — a
library's clean-up error can even hide the real one. :func:`explain` turns a failure into a
:class:`DeviceFault` from the exception's text and errno and from the device's own options (a
port option is probed), so the window and the CLI can show the reason next to the device.
Nothing here names a device: it reads the config's options and labels.
"""
from __future__ import annotations

import errno
import re
import socket
import time
from dataclasses import dataclass, field

from teleop.core.errors import ConfigError, TeleopError

ADDRESS_RE = re.compile(r"addr='([^']*)'")


@dataclass(frozen=True)
class DeviceFault:
    what: str                     # what happened, one line
    why: str                      # the reason, as precise as we can tell
    hint: str                     # what to try
    when: float = field(default_factory=time.time)

    def text(self) -> str:
        return f"{self.what}: {self.why}. Try: {self.hint}"


def _errnos(exc: BaseException) -> set[int]:
    """Every errno in the exception and its causes (ZMQError, OSError, wrapped ones)."""
    found, seen = set(), set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(getattr(exc, "errno", None), int):
            found.add(exc.errno)
        exc = exc.__cause__ or exc.__context__
    return found


def port_in_use(host: str, port: int) -> bool:
    """True when binding ``host:port`` fails because something already listens there."""
    host = "" if host in ("*", "0.0.0.0", "") else host
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _busy_ports(config) -> list[int]:
    """The config's port options (whole-number options named ``*port``) that are already taken."""
    values = {o.name: getattr(config, o.name, None) for o in config.options()}
    host = str(values.get("host") or "0.0.0.0")
    busy = []
    for name, value in values.items():
        if name.endswith("port") and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            try:
                if port_in_use(host, value):
                    busy.append(value)
            except OSError:          # an unresolvable host: the exception says so already
                pass
    return busy


def explain(config, exc: BaseException) -> DeviceFault:
    """Why connecting ``config``'s device failed, and what to try."""
    label = getattr(config, "label", "") or getattr(config, "name", "the device")
    what = f"{label} did not connect"
    text = f"{exc}"
    if isinstance(exc, ConfigError):
        return DeviceFault(what, text, "correct that option in the device form and Connect again")
    if isinstance(exc, TeleopError) and not _errnos(exc) and not _busy_ports(config):
        return DeviceFault(what, text, "do what the reason says, then Connect again")
    busy = _busy_ports(config)
    if busy:
        return DeviceFault(what, f"port {busy[0]} is already in use by another program (another station?)",
                           "close that program, or set the port to another number (0 picks a free one)")
    codes = _errnos(exc)
    if errno.EADDRINUSE in codes or "already in use" in text.lower():
        return DeviceFault(what, f"an address it needs is already in use ({text})",
                           "close the program using it, or choose other addresses in the device form")
    address = ADDRESS_RE.search(text)
    if address and (errno.EINVAL in codes or "Invalid argument" in text):
        return DeviceFault(what, f"{address.group(1)!r} is not a valid address",
                           "write addresses as tcp://HOST:PORT, e.g. tcp://127.0.0.1:5570")
    if errno.ECONNREFUSED in codes or "refused" in text.lower():
        return DeviceFault(what, f"the device refused the connection ({text})",
                           "check the device is switched on and its address is right")
    return DeviceFault(what, f"{type(exc).__name__}: {text}" if text else type(exc).__name__,
                       "check the device is on and reachable and the form's options are right, then Connect again")


def no_frames(config, seconds: float, info=None) -> DeviceFault:
    """An open device that has sent nothing (not 'connected': the robot cannot follow it)."""
    label = getattr(config, "label", "") or getattr(config, "name", "the device")
    where = f" ({info.summary})" if info is not None and info.summary else ""
    hint = getattr(config, "no_frames_hint", "") or "switch the device on and point it at this address"
    if info is not None and info.url:
        hint = f"open {info.url} on the device"
    return DeviceFault(f"{label} is open but sends nothing", f"no frames in {seconds:.0f} s{where}", hint)


def frames_stopped(config, seconds: float) -> DeviceFault:
    label = getattr(config, "label", "") or getattr(config, "name", "the device")
    return DeviceFault(f"{label} stopped sending", f"no new frame for {seconds:.0f} s (the robot holds its pose)",
                       "check the device and its network; frames resume by themselves")


def failed_while_running(config, exc: BaseException) -> DeviceFault:
    label = getattr(config, "label", "") or getattr(config, "name", "the device")
    return DeviceFault(f"{label} failed while running and was disconnected",
                       f"{type(exc).__name__}: {exc}", "Connect again; a take that was recording has been kept")
