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


@pytest.fixture(autouse=True)
def _qt_garbage_collected_on_the_gui_thread(request):
    """After a Qt test: run deferred deletes and collect cyclic garbage here, on the GUI thread.
    Python's cyclic collector otherwise runs on whichever thread allocates next (a control loop,
    a render or device thread) and destroying a QObject there corrupts Qt's state — the cause of
    a segfault in a later test's window construction."""
    yield
    if not {"qtbot", "qapp"} & set(request.fixturenames):
        return
    import gc

    from PyQt6.QtCore import QCoreApplication, QEvent
    app = QCoreApplication.instance()
    if app is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        app.processEvents()
    gc.collect()
