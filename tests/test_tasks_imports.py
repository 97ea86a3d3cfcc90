"""teleop.tasks has no import cycle: every module imports alone, and the module-level import graph
inside the package is acyclic (registries are filled by the modules that register, imported by
the catalog modules, never by a bottom-of-file import back into the registry's module)."""
from __future__ import annotations

import ast
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "teleop.tasks"
FOLDER = ROOT / "teleop" / "tasks"


def modules() -> list[str]:
    return [PACKAGE] + sorted(f"{PACKAGE}.{p.stem}" for p in FOLDER.glob("*.py") if p.stem != "__init__")


def _file(module: str) -> Path:
    return FOLDER / "__init__.py" if module == PACKAGE else FOLDER / f"{module.rsplit('.', 1)[1]}.py"


def top_level_imports(module: str) -> set[str]:
    """Modules of this package that ``module`` imports when it is executed (module level only)."""
    known = set(modules())
    out = set()
    for node in ast.parse(_file(module).read_text()).body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                          # relative: from its package, level - 1 further up
                pkg = module.split(".") if module == PACKAGE else module.split(".")[:-1]
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            submodules = {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known}
            # ``from pkg import mod`` runs mod, not pkg/__init__ (that runs before any submodule anyway)
            out |= submodules if len(submodules) == len(node.names) else {base, *submodules}
    return {m for m in out if m in known and m != module}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}                      # 1 on the stack, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path + [nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_module_level_import_graph_has_no_cycle():
    graph = {m: top_level_imports(m) for m in modules()}
    assert graph[f"{PACKAGE}.fixtures"], "the graph sees imports (sanity)"
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_no_import_below_the_top_of_a_module():
    """Registration by a bottom-of-file import is how the cycles came in: imports lead the module."""
    late = []
    for m in modules():
        body = ast.parse(_file(m).read_text()).body
        first_code = next((i for i, n in enumerate(body) if not isinstance(n, (ast.Import, ast.ImportFrom))
                           and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))), len(body))
        late += [f"{m}:{n.lineno}" for n in body[first_code:] if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert late == []


def _import_alone(module: str) -> tuple[str, int, str]:
    code = f"import importlib; importlib.import_module({module!r})"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    return module, proc.returncode, proc.stderr[-2000:]


@pytest.mark.timeout(300)
def test_every_module_imports_alone_in_a_fresh_interpreter():
    with ThreadPoolExecutor(max_workers=2) as pool:          # a shared machine: two interpreters at a time
        results = list(pool.map(_import_alone, modules()))
    failed = [(m, err) for m, rc, err in results if rc != 0]
    assert failed == []


def test_the_registries_are_complete_whichever_module_is_imported_first():
    """Importing only the registry module still yields the whole catalog (fresh interpreter)."""
    code = ("import teleop.tasks.predicates as p, teleop.tasks.objects as o; "
            "print(len(p.PREDICATES), len(o.KINDS))")
    first = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    from teleop.tasks.objects import KINDS
    from teleop.tasks.predicates import PREDICATES
    assert first.stdout.split() == [str(len(PREDICATES)), str(len(KINDS))]
    assert {"button", "box", "shelf", "container"} <= set(KINDS) and {"lifted", "grasped", "not"} <= set(PREDICATES)
