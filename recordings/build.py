"""Which build a take was recorded on, and what "reproduced" means for a replay on this one.

MuJoCo is deterministic for one binary on one kind of machine: replaying a take's actions from its
initial state reproduces every recorded state bit for bit, and validation demands exactly that.
On another build (other MuJoCo, NumPy or Python version, another OS or CPU architecture) floating
point may round differently and contacts amplify it, so only a stated tolerance can be asked for.
"""
from __future__ import annotations

import platform

import mujoco
import numpy as np

BUILD_KEYS = ("mujoco", "numpy", "python", "machine", "system")
# Across builds: recorded and replayed positions (joint angles in rad, object positions in m, the
# wrist poses in the observation) must agree to within this; velocities are not compared.
CROSS_BUILD_TOLERANCE = 1e-3


def current_build() -> dict[str, str]:
    return {"mujoco": mujoco.__version__, "numpy": np.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "system": platform.system()}


def build_of(software: dict) -> dict[str, str]:
    """The build fields of a take's ``meta.software`` ("?" for fields an older take lacks)."""
    return {k: str(software.get(k, "?")) for k in BUILD_KEYS}


def same_build(software: dict) -> bool:
    """True when the take was recorded on exactly this build (every field known and equal)."""
    return build_of(software) == current_build()


def describe(build: dict) -> str:
    return (f"mujoco {build['mujoco']}, numpy {build['numpy']}, python {build['python']}, "
            f"{build['system']} {build['machine']}")
