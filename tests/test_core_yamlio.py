"""``load_yaml``: every way a hand-written file can be broken is a ConfigError naming the file."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from teleop.core.errors import ConfigError
from teleop.core.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[1]


def _write(tmp_path, data: bytes | str, name: str = "thing.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_a_mapping_loads(tmp_path):
    assert load_yaml(_write(tmp_path, "a: 1\nb: [x, y]\n"), "thing") == {"a": 1, "b": ["x", "y"]}


def test_missing_file(tmp_path):
    path = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match=r"missing.yaml: cannot read thing: No such file"):
        load_yaml(path, "thing")


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(ConfigError, match=rf"{tmp_path.name}: cannot read thing"):
        load_yaml(tmp_path, "thing")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    path = _write(tmp_path, "a: 1\n")
    path.chmod(0)
    with pytest.raises(ConfigError, match=r"thing.yaml: cannot read thing: Permission denied"):
        load_yaml(path, "thing")


def test_non_utf8_bytes_name_the_file_not_a_codec(tmp_path):
    path = _write(tmp_path, b"name: caf\xe9\n")            # Latin-1, as some editors save
    with pytest.raises(ConfigError) as err:
        load_yaml(path, "thing")
    msg = str(err.value)
    assert str(path) in msg and "not UTF-8" in msg and "0xe9" in msg and "offset 9" in msg
    assert not isinstance(err.value.__cause__, UnicodeDecodeError) and err.value.__suppress_context__


def test_syntax_error_names_the_line(tmp_path):
    path = _write(tmp_path, "a: 1\nb: [unclosed\nc: 2\n")
    with pytest.raises(ConfigError, match=r"thing.yaml: bad YAML at line \d+, column \d+: .*\(cannot read thing\)"):
        load_yaml(path, "thing")
    path = _write(tmp_path, "a: 1\n  b: 2\n")              # bad indentation: line 2
    with pytest.raises(ConfigError, match=r"bad YAML at line 2, column 4"):
        load_yaml(path, "thing")


def test_unsafe_tags_are_refused(tmp_path):
    path = _write(tmp_path, "a: !!python/object/apply:os.system [echo hi]\n")
    with pytest.raises(ConfigError, match=r"thing.yaml: bad YAML at line 1"):
        load_yaml(path, "thing")


@pytest.mark.parametrize("text, got", [("- a\n- b\n", "a list"), ("just words\n", "a str"), ("", "an empty file"),
                                       ("# only a comment\n", "an empty file"), ("3\n", "a int")])
def test_top_level_must_be_a_mapping(tmp_path, text, got):
    with pytest.raises(ConfigError, match=rf"thing.yaml: thing: the top level must be a YAML mapping .*got {got}"):
        load_yaml(_write(tmp_path, text), "thing")


def _loaders():
    """Every hand-written loader, as (name, fn(path))."""
    from retarget.config import load_config, load_hand_config
    from retarget.nodes import load_node_map
    from retarget.profile import OperatorProfile
    from teleop.control.synthetic.human import load_grasps
    from teleop.control.synthetic.script import load_script
    from teleop.robot import load_params
    from teleop.tasks import load_spec
    return [("robot parameters", load_params), ("task spec", load_spec), ("retarget config", load_config),
            ("retarget config", load_hand_config), ("node map", load_node_map.__wrapped__),
            ("operator profile", OperatorProfile.load), ("grasp shapes", lambda p: load_grasps(None, p)),
            ("synthetic-operator script", lambda p: load_script(p.stem, p.parent))]


@pytest.mark.parametrize("case", range(len(_loaders())))
def test_every_loader_goes_through_load_yaml(tmp_path, case):
    what, load = _loaders()[case]
    for data in (b"a: \xff\xfe\n", b"a: [1,\n", b"- 1\n"):
        path = _write(tmp_path, data)
        with pytest.raises(ConfigError) as err:
            load(path)
        assert str(path) in str(err.value) and what in str(err.value), str(err.value)


def test_no_module_parses_yaml_itself():
    """yaml.safe_load / yaml.load appear only in teleop/core/yamlio.py."""
    offenders = []
    for package in ("teleop", "devices", "retarget", "recordings", "ui", "bench"):
        for path in (ROOT / package).rglob("*.py"):
            if "node_modules" in path.parts or path == ROOT / "teleop/core/yamlio.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Attribute) and node.attr in ("safe_load", "load", "full_load", "unsafe_load") \
                        and isinstance(node.value, ast.Name) and node.value.id == "yaml":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
