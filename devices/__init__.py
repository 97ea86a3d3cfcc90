"""Operator devices: everything they produce is an ``OperatorFrame`` (see ``devices.frame``).

Each device is one module with a registered config (``devices.config.DeviceConfig``); build one
with ``devices.create_device(name, **options)`` once its module is imported
(``teleop.control.devices.load_devices()`` imports them all).
"""
from devices.base import ConnectionInfo, Device, DeviceError, Reading
from devices.config import DeviceConfig, DeviceContext, create_device, device_config
from devices.frame import SIDES, FrameError, HandFrame, OperatorFrame, Pose
from teleop.core.conventions import NODE_NAMES

__all__ = ["ConnectionInfo", "Device", "DeviceConfig", "DeviceContext", "DeviceError", "FrameError", "HandFrame",
           "NODE_NAMES", "OperatorFrame", "Pose", "Reading", "SIDES", "create_device", "device_config"]
