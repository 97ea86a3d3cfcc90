"""Where a take or a dataset came from: the software versions and the source revision.

Recorded in every take (``TakeMeta.software``) and every export (``meta/bidex_export.json``), so a
policy trainer can tell which build produced which data. Versions come from package metadata
(``importlib.metadata``), never from importing the package: recording must not pay for importing
lerobot (torch) just to learn its version.

The revision is ``git describe --always --dirty --tags`` of the source tree when it is a git
checkout with git installed; otherwise (an installed wheel, a copied tree) it is the package
version plus a hash of the source files' contents, ``"<version>+src.<sha256[:12]>"``, which still
changes whenever the code does.
"""
from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("mujoco", "numpy", "scipy", "h5py", "lerobot")
APP = "bidex-teleop"
SOURCE_ROOT = Path(__file__).resolve().parents[1]
SOURCE_PACKAGES = ("teleop", "recordings", "retarget", "devices", "ui")


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


def git_describe(root: Path = SOURCE_ROOT) -> str | None:
    """``git describe`` of ``root``, or None when git or the repository is unavailable."""
    try:
        out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def content_hash(root: Path = SOURCE_ROOT, packages: tuple[str, ...] = SOURCE_PACKAGES) -> str:
    """sha256 over the relative paths and bytes of every ``.py``/``.yaml`` file of ``packages``."""
    digest = hashlib.sha256()
    for package in packages:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(p for p in base.rglob("*") if p.suffix in (".py", ".yaml")
                           and "node_modules" not in p.parts and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_revision(root: Path = SOURCE_ROOT, describe=git_describe) -> str:
    """The revision string described in the module docstring."""
    described = describe(root)
    if described:
        return f"git:{described}"
    return f"{_version(APP)}+src.{content_hash(root)[:12]}"


@functools.lru_cache(maxsize=1)
def software() -> dict[str, str]:
    """Python and the libraries a take or dataset depends on, the app version and the revision.

    Cached per process: the revision cannot change under a running program."""
    import mujoco       # already loaded by anything that records; its version is the compiled one

    out = {"python": platform.python_version(), **{p: _version(p) for p in PACKAGES}}
    out["mujoco"] = mujoco.__version__
    out["app"] = _version(APP)
    out["revision"] = source_revision()
    return out
