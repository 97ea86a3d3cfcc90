"""Which device renders an export: an NVIDIA GPU through EGL when one is present, else the CPU.

MuJoCo's EGL backend picks a device from ``MUJOCO_EGL_DEVICE_ID`` (read when the first GL context
is made, so a render process can set it at its start). MuJoCo 3.4+ orders the devices by CUDA id
when every NVIDIA device reports one (``EGL_NV_device_cuda``) and then reads the variable as a
CUDA id (or, with ``CUDA_VISIBLE_DEVICES``, as an index into the visible list); without CUDA ids
it is an index into EGL's own order, where Mesa's software device may come first. So:

- the user's own ``MUJOCO_GL`` (not egl) or ``MUJOCO_EGL_DEVICE_ID`` always wins;
- NVIDIA devices present: render process ``worker`` takes NVIDIA device ``worker % count``,
  named the way MuJoCo will read it (a CUDA id, a visible index, or an EGL index);
- none: the CPU (Mesa's llvmpipe through EGL); if EGL has no device at all, OSMesa (only
  effective in a process that has not imported mujoco yet).

:func:`choose_device` is pure (tested with made-up device lists); :func:`probe_egl_devices`
asks the EGL driver.
"""
from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass, field
from collections.abc import Mapping

EGL_EXTENSIONS = 0x3055
EGL_DRM_DEVICE_FILE_EXT = 0x3233
NVIDIA_EXTENSION = "EGL_NV_device_cuda"
SOFTWARE_EXTENSION = "EGL_MESA_device_software"


@dataclass(frozen=True)
class EglDevice:
    index: int                  # position in eglQueryDevicesEXT's order
    extensions: str = ""
    cuda_id: int | None = None
    drm_file: str = ""

    @property
    def is_nvidia(self) -> bool:
        return self.cuda_id is not None or NVIDIA_EXTENSION in self.extensions

    @property
    def is_software(self) -> bool:
        return SOFTWARE_EXTENSION in self.extensions


@dataclass(frozen=True)
class RenderDevice:
    kind: str                   # "gpu" or "cpu"
    description: str
    env: dict[str, str] = field(default_factory=dict)    # variables to set before the first GL context


def _visible(env: Mapping[str, str]) -> list[int] | None:
    try:
        ids = [int(x) for x in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip()]
    except ValueError:
        return None
    return ids or None


def _mujoco_device_id(chosen: EglDevice, devices: list[EglDevice], env: Mapping[str, str]) -> str:
    """The ``MUJOCO_EGL_DEVICE_ID`` under which MuJoCo's EGL backend opens ``chosen``."""
    nvidia = [d for d in devices if d.is_nvidia]
    cuda_ids = [d.cuda_id for d in nvidia]
    if chosen.cuda_id is not None and None not in cuda_ids and len(set(cuda_ids)) == len(cuda_ids):
        visible = _visible(env)
        if visible and all(v in cuda_ids for v in visible) and chosen.cuda_id in visible:
            return str(visible.index(chosen.cuda_id))
        if not visible:
            return str(chosen.cuda_id)
    return str(chosen.index)


def choose_device(devices: list[EglDevice] | None, env: Mapping[str, str], worker: int = 0) -> RenderDevice:
    """The device render process ``worker`` should use; ``devices`` None: EGL is unavailable."""
    backend = env.get("MUJOCO_GL", "egl").strip().lower() or "egl"
    if backend != "egl":
        return RenderDevice("cpu" if backend == "osmesa" else "unknown", f"MUJOCO_GL={backend} (as set)")
    if devices is None or not devices:
        return RenderDevice("cpu", "CPU (OSMesa: EGL has no device)",
                            {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"})
    pinned = env.get("MUJOCO_EGL_DEVICE_ID")
    nvidia = [d for d in devices if d.is_nvidia]
    if pinned is not None:
        return RenderDevice("gpu" if nvidia else "cpu", f"EGL device {pinned} (MUJOCO_EGL_DEVICE_ID as set)")
    if nvidia:
        chosen = nvidia[worker % len(nvidia)]
        name = f"cuda {chosen.cuda_id}" if chosen.cuda_id is not None else f"egl {chosen.index}"
        return RenderDevice("gpu", f"NVIDIA GPU ({name}) through EGL",
                            {"MUJOCO_EGL_DEVICE_ID": _mujoco_device_id(chosen, devices, env)})
    software = [d for d in devices if d.is_software]
    what = "Mesa llvmpipe" if software else "the first EGL device"
    return RenderDevice("cpu", f"CPU ({what} through EGL)")


def probe_egl_devices() -> list[EglDevice] | None:
    """The EGL devices the driver lists, or None when EGL cannot be used in this process."""
    if os.environ.get("PYOPENGL_PLATFORM", "egl") != "egl":
        return None
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    try:
        from mujoco.egl import egl_ext as EGL
        raw = EGL.eglQueryDevicesEXT()
    except Exception:  # noqa: BLE001 - no libEGL, no device extension, a driver error: no EGL
        return None
    query = _string_query(EGL)
    out = []
    for i, dev in enumerate(raw):
        try:
            cuda = EGL.eglQueryDeviceAttribEXT(dev, EGL.EGL_CUDA_DEVICE_NV)
        except Exception:  # noqa: BLE001 - only NVIDIA drivers answer this
            cuda = None
        out.append(EglDevice(i, query(dev, EGL_EXTENSIONS), cuda, query(dev, EGL_DRM_DEVICE_FILE_EXT)))
    return out


def _string_query(EGL):
    proto = ctypes.CFUNCTYPE(ctypes.c_char_p, EGL.EGLDeviceEXT, EGL.EGLint)
    try:
        fn = proto(EGL.eglGetProcAddress("eglQueryDeviceStringEXT"))
    except TypeError:
        return lambda dev, name: ""

    def query(dev, name: int) -> str:
        value = fn(dev, name)
        return value.decode(errors="replace") if value else ""
    return query


def configure_rendering(worker: int = 0) -> RenderDevice:
    """Choose the device for this (render) process and set the variables MuJoCo reads; call it
    before the first GL context. OSMesa can only be switched to before mujoco is imported."""
    if os.environ.get("MUJOCO_GL", "egl").strip().lower() in ("", "egl"):
        devices = probe_egl_devices()
    else:
        devices = []
    device = choose_device(devices, os.environ, worker)
    if device.env.get("MUJOCO_GL") == "osmesa" and "mujoco" in sys.modules:
        return RenderDevice("cpu", device.description + "; mujoco was already imported, so left as is")
    os.environ.update(device.env)
    return device
