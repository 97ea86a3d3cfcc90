"""Operator devices: everything they produce is an ``OperatorFrame`` (see ``devices.frame``).

Importing the package registers the built-in device types (``glove``, ``webxr``, ``synthetic``,
``replay``); build one with
``devices.create_device(name, **options)``.
"""
from devices.base import DEVICES, Device, DeviceError, Reading, create_device, register_device
from devices.frame import NODE_NAMES, SIDES, FrameError, HandFrame, OperatorFrame, Pose
from devices import glove as _glove  # noqa: F401  (registers "glove")
from devices import webxr as _webxr  # noqa: F401  (registers "webxr")
from devices import synthetic as _synthetic  # noqa: F401  (registers "synthetic")
from devices import replay as _replay  # noqa: F401  (registers "replay")

__all__ = ["DEVICES", "Device", "DeviceError", "FrameError", "HandFrame", "NODE_NAMES",
           "OperatorFrame", "Pose", "Reading", "SIDES", "create_device", "register_device"]
