"""The layers, enforced: every import in the project's source is checked against the rule.

    foundation  teleop.core < teleop.robot < teleop.sim < teleop.tasks
    libraries   devices, retarget, recordings      (the foundation only, and each other as listed)
    control     teleop.control                     (everything above)
    ui          ui                                 (control and below)
    cli         teleop.cli                         (everything; ``ui`` only lazily, inside functions)

An AST walk, so it sees imports inside functions too (a lazy import is still a dependency, except
the CLI's lazy import of the window, which is the one allowed).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("teleop", "devices", "retarget", "recordings", "ui")
FOUNDATION = ("teleop.core", "teleop.robot", "teleop.sim", "teleop.tasks")

# layer -> the layers it may import (its own included).
ALLOWED = {
    "teleop.core": {"teleop.core"},
    "teleop.robot": {"teleop.core", "teleop.robot"},
    "teleop.sim": {"teleop.core", "teleop.robot", "teleop.sim"},
    "teleop.tasks": set(FOUNDATION),
    "retarget": {*FOUNDATION, "retarget"},
    "devices": {*FOUNDATION, "devices"},
    "recordings": {*FOUNDATION, "recordings"},
    "teleop.control": {*FOUNDATION, "devices", "retarget", "recordings", "teleop.control"},
    "ui": {*FOUNDATION, "devices", "retarget", "recordings", "teleop.control", "ui"},
    "teleop.cli": {*FOUNDATION, "devices", "retarget", "recordings", "teleop.control", "teleop.cli"},
}
LAZY_ONLY = {("teleop.cli", "ui")}        # allowed inside a function only: the CLI never loads Qt up front


def layer_of(module: str) -> str | None:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path):
    """(imported module, line, at module level?) for every absolute import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno, id(node) in top


def source_files():
    for package in PACKAGES:
        yield from sorted(p for p in (ROOT / package).rglob("*.py") if "node_modules" not in p.parts)


def violations() -> list[str]:
    out = []
    for path in source_files():
        mine = layer_of(module_name(path))
        if mine is None:                  # teleop/__init__.py, teleop/__main__.py
            continue
        for target, line, top_level in imports(path):
            theirs = layer_of(target) if target.split(".")[0] in PACKAGES else None
            if theirs is None or theirs in ALLOWED[mine]:
                continue
            if (mine, theirs) in LAZY_ONLY and not top_level:
                continue
            out.append(f"{path.relative_to(ROOT)}:{line}: {mine} imports {target} ({theirs})")
    return out


def test_every_import_follows_the_layers():
    assert violations() == []


def test_the_checker_catches_a_violation(tmp_path, monkeypatch):
    bad = ROOT / "devices" / "_layer_probe.py"
    bad.write_text("from teleop.control.session import Session\n")
    try:
        found = violations()
    finally:
        bad.unlink()
    assert found == ["devices/_layer_probe.py:1: devices imports teleop.control.session (teleop.control)"]


def test_teleop_package_init_stays_empty():
    """``teleop/__init__.py`` re-exports nothing: a re-export there would load the application
    whenever the foundation is imported (and did: a circular import)."""
    assert (ROOT / "teleop" / "__init__.py").read_text().strip() == ""


@pytest.mark.parametrize("package", ["devices", "retarget", "recordings", "teleop.tasks", "teleop.sim"])
def test_each_library_imports_on_its_own_without_the_application(package):
    """In a fresh interpreter, importing a library loads no control, CLI or Qt module."""
    code = (f"import sys, {package}; bad = sorted(m for m in sys.modules if m.startswith(('teleop.control', "
            f"'teleop.cli', 'ui', 'PyQt6'))); print(bad); sys.exit(bool(bad))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
