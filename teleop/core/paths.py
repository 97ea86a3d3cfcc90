"""Where the application keeps things on the user's machine (XDG locations, overridable)."""
from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "bidex-teleop"


def config_dir() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    return base / "bidex-teleop"


def default_store() -> Path:
    """The take store: $TELEOP_STORE, else ~/.local/share/bidex-teleop/takes."""
    return Path(os.environ.get("TELEOP_STORE", data_dir() / "takes"))
