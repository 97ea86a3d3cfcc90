import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
sys.path.insert(0, str(Path(__file__).parent))   # test helpers import as plain modules

import pytest  # noqa: E402

from teleop.sim.scene import build_scene  # noqa: E402


@pytest.fixture(scope="session")
def scene():
    """The bare robot scene, compiled once per test session."""
    return build_scene()
