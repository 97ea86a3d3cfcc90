"""Command-line flags generated from the registered device configs, shared by the commands that
open a device (``teleop record``, ``teleop calibrate``): one flag per device option, so a new
device or option needs no CLI change."""
from __future__ import annotations

import argparse

from devices.config import DeviceConfig


def add_device_options(parser: argparse.ArgumentParser, configs: dict[str, type[DeviceConfig]]) -> None:
    """One flag per device option, grouped by device; an option two devices share is one flag."""
    seen: dict[str, str] = {}
    defaults: dict[str, dict[str, object]] = {}       # option -> device -> default
    for name, config in sorted(configs.items()):
        for option in config.options():
            defaults.setdefault(option.name, {})[name] = option.default
    for name, config in sorted(configs.items()):
        group = parser.add_argument_group(f"{name} device ({config.label})")
        for option in config.options():
            if option.name in seen:
                continue
            seen[option.name] = name
            kind = option.type if option.type is not bool else None
            default = _default_text(defaults[option.name])
            if kind is None:
                group.add_argument(option.flag, dest=option.name, action="store_true", default=None,
                                   help=option.help)
            else:
                group.add_argument(option.flag, dest=option.name, type=kind, help=option.help + default)


def _default_text(by_device: dict[str, object]) -> str:
    """The help text's default: one value, or each device's when the devices sharing the flag differ."""
    values = {v for v in by_device.values() if v is not None}
    if not values:
        return ""
    if len(set(map(repr, by_device.values()))) == 1:
        return f" (default {next(iter(values))})"
    return " (default: " + ", ".join(f"{d} {v}" for d, v in by_device.items() if v is not None) + ")"


def device_options(args: argparse.Namespace, config: type[DeviceConfig]) -> dict:
    """The options of ``config`` given on the command line (unset flags keep the config's defaults)."""
    return {o.name: getattr(args, o.name) for o in config.options() if getattr(args, o.name, None) is not None}
