"""Shared plumbing of the devices that PLAY a stream (synthetic operator, replay): connected
state and an optional reader thread that feeds frames on a wall-clock schedule."""
from __future__ import annotations

from collections.abc import Callable

from devices.base import BackgroundReader, ConnectionInfo, Device


class PlayerDevice(Device):
    _connected = False
    _reader: BackgroundReader | None = None

    def _start_reader(self, name: str, produce: Callable[[float], None]) -> None:
        self._reader = BackgroundReader(name, produce)
        self._reader.start()

    def close(self) -> None:
        if self._reader is not None:
            self._reader.stop()
            self._reader = None
        self._connected = False

    @property
    def is_connected(self) -> bool:
        return self._connected

    def connection_info(self) -> ConnectionInfo:
        stats = self.stats()
        return ConnectionInfo(f"{type(self).__name__}: {stats.get('frames', 0)} frames"
                              + (", playing" if self._connected else ", stopped"))
