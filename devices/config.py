"""One registered config dataclass per device (the pattern of lerobot's ``TeleoperatorConfig``).

A config carries everything the rest of the product needs to know about a device, so nothing
else keys a table on its name:

- ``label`` and ``menu_order`` (what the app's device list shows, and where), ``realtime`` (paced
  at the control rate by its own clock), ``per_episode`` (planned / recorded for one episode:
  rebuilt at every reset), ``in_app`` (offered in the window's device list) and
  ``horizon_from_engage`` (a live operator who connects and engages when ready: the episode's
  horizon counts from the first engage);
- its options: the dataclass fields, with ``help`` (and optionally ``flag``) in the field metadata.
  ``teleop record``'s flags and the window's device form are generated from them;
- ``build(context)``: the device, constructed without I/O.

Register with ``@DeviceConfig.register_subclass("name")``; look up with :func:`device_config`.
"""
from __future__ import annotations

import abc
import dataclasses
import importlib
import pkgutil
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from teleop.core.errors import ConfigError, TeleopError, choices

from devices.base import Device


@dataclass(frozen=True)
class Option:
    """One device option, derived from a config field."""

    name: str                 # the field name (the keyword ``from_options`` takes)
    type: type                # bool, int, float, str or Path
    default: Any              # None: required (or "no value" for optional ones)
    help: str
    flag: str                 # the command-line flag, e.g. "--endpoint"
    required: bool = False


@dataclass(frozen=True)
class EpisodeSource:
    """Which episode a device plays, when the device (not the operator) decides it: a replay plays
    its take's task and episode from the take's own initial state."""

    task_id: str
    seed_index: int
    episode_index: int
    initial_state: tuple[float, ...] | None = None
    retarget_config: str = ""                # the retarget configuration (YAML text) it was recorded with
    operator_profile: str = ""               # the operator profile (YAML text; "" = the default)
    # The episode's length in ticks when known (a take's): its horizon, which may exceed the
    # task's when the recording's horizon counted from the operator's engage.
    ticks: int | None = None


@dataclass(frozen=True)
class DeviceContext:
    """What building a device may use: the just-reset task runtime and the retargeter (players
    plan from them), the pacing the caller wants, and the episode index (a seed for players)."""

    runtime: object | None = None
    retargeter: object | None = None
    realtime: bool | None = None            # None: the device's natural clock
    episode_index: int = 0


_SCALARS = (bool, int, float, str, Path)


def _option_type(hint) -> type:
    """The scalar type of a field annotation (``X | None`` -> X)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if hint not in _SCALARS:
        raise TeleopError(f"device option type {hint!r} is not one of {choices(t.__name__ for t in _SCALARS)}")
    return hint


@dataclass(frozen=True, kw_only=True)
class DeviceConfig(abc.ABC):
    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    realtime: ClassVar[bool] = True
    per_episode: ClassVar[bool] = False
    in_app: ClassVar[bool] = True
    menu_order: ClassVar[int] = 100        # position in the window's device list (then by name)
    horizon_from_engage: ClassVar[bool] = False
    no_frames_hint: ClassVar[str] = ""      # what to try when it is open but sends no frames
    _registry: ClassVar[dict[str, type[DeviceConfig]]] = {}

    @classmethod
    def register_subclass(cls, name: str):
        """Class decorator: register a config under ``name`` (a second class under one name fails)."""
        def decorate(sub: type[DeviceConfig]) -> type[DeviceConfig]:
            known = cls._registry.get(name)
            if known is not None and known.__qualname__ != sub.__qualname__:
                raise TeleopError(f"device type {name!r} registered twice ({known.__qualname__}, {sub.__qualname__})")
            sub.name = name
            cls._registry[name] = sub
            return sub
        return decorate

    @classmethod
    def unregister(cls, name: str) -> None:
        """Forget the config registered as ``name`` (a test's or a plugin's device)."""
        cls._registry.pop(name, None)

    @classmethod
    def registry(cls) -> dict[str, type[DeviceConfig]]:
        return dict(cls._registry)

    @classmethod
    def options(cls) -> tuple[Option, ...]:
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            has_factory = f.default_factory is not dataclasses.MISSING
            required = f.default is dataclasses.MISSING and not has_factory
            default = None if required else (f.default_factory() if has_factory else f.default)  # type: ignore[operator]
            flag = f.metadata.get("flag", "--" + f.name.replace("_", "-"))
            out.append(Option(f.name, _option_type(hints[f.name]), default, f.metadata.get("help", ""), flag, required))
        return tuple(out)

    @classmethod
    def from_options(cls, **values) -> DeviceConfig:
        """The config from option values (strings are converted); unknown names are refused."""
        options = {o.name: o for o in cls.options()}
        unknown = sorted(set(values) - set(options))
        if unknown:
            raise ConfigError(f"device {cls.name!r}: unknown option {unknown[0]!r}; valid: {choices(options)}")
        missing = [o.flag for o in options.values() if o.required and values.get(o.name) is None]
        if missing:
            raise ConfigError(f"device {cls.name!r} needs {', '.join(missing)}")
        return cls(**{k: _convert(options[k], v) for k, v in values.items() if v is not None})

    def episode(self) -> EpisodeSource | None:
        """The episode this device plays, if the device decides it (default: the caller decides)."""
        return None

    @abc.abstractmethod
    def build(self, context: DeviceContext) -> Device:
        """The device, constructed (no I/O: ``connect()`` opens it)."""


_TYPE_WORDS = {int: "whole number", float: "number", str: "text", Path: "path", bool: "yes/no value"}


def _convert(option: Option, value):
    if option.type is bool and isinstance(value, str):
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ConfigError(f"option {option.flag}: {value!r} is not a yes/no value")
        return value.lower() in ("true", "1", "yes")
    try:
        return option.type(value)
    except (TypeError, ValueError):
        raise ConfigError(f"option {option.flag}: {value!r} is not a {_TYPE_WORDS[option.type]}") from None


def discover(*packages: str) -> dict[str, type[DeviceConfig]]:
    """Import every module of ``packages`` (default: this one) so their configs register; the
    registry. Adding a device is adding a module: no list of devices is kept anywhere."""
    for package in packages or ("devices",):
        root = importlib.import_module(package)
        for info in pkgutil.iter_modules(root.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{package}.{info.name}")
    return DeviceConfig.registry()


def device_config(name: str) -> type[DeviceConfig]:
    """The config class registered as ``name`` (the devices of this package are found by import)."""
    registry = DeviceConfig.registry() if name in DeviceConfig.registry() else discover()
    if name not in registry:
        raise ConfigError(f"unknown device {name!r}; valid: {choices(sorted(registry))}")
    return registry[name]


def create_device(name: str, context: DeviceContext | None = None, **options) -> Device:
    """Build (without connecting) the device registered as ``name`` with its options."""
    return device_config(name).from_options(**options).build(context or DeviceContext())
