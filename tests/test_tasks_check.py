"""``teleop tasks check [--build]``: every file is checked, each bad one reported with its file, field
and the valid choices, and a pipe closed early (``| head``) is not a traceback."""
from __future__ import annotations

import copy
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from teleop.cli.main import main
from teleop.core.errors import ConfigError
from teleop.tasks import build_task, load_spec, parse_spec
from test_tasks_spec import GOOD                 # the one minimal valid spec of the task tests

ROOT = Path(__file__).resolve().parents[1]


def _spec_file(folder: Path, name: str, mutate=None, raw: bytes | None = None) -> Path:
    spec = copy.deepcopy(GOOD)
    spec["id"] = name
    if mutate:
        mutate(spec)
    path = folder / f"{name}.yaml"
    path.write_bytes(raw if raw is not None else yaml.safe_dump(spec).encode())
    return path


def _check(capsys, *args) -> tuple[int, str, str]:
    code = main(["tasks", "check", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _fails_then_next_is_checked(tmp_path, capsys, mutate=None, raw=None, build=False):
    bad = _spec_file(tmp_path, "bad", mutate, raw)
    good = _spec_file(tmp_path, "good")
    code, out, err = _check(capsys, *(["--build"] if build else []), bad, good)
    assert code == 1
    assert f"ok   {good}" in out and "1 ok, 1 failed" in out, out
    assert "Traceback" not in err and err.count("FAIL") == 1
    assert str(bad) in err, err
    return err


def test_a_non_utf8_spec_names_the_file_and_the_next_file_is_checked(tmp_path, capsys):
    text = yaml.safe_dump(dict(GOOD, id="bad", instruction="Put the cube in the caf\u00e9 bowl."),
                          allow_unicode=True).encode("latin-1")
    err = _fails_then_next_is_checked(tmp_path, capsys, raw=text)
    assert "not UTF-8" in err


def test_rgba_of_three_numbers_is_refused_by_the_check(tmp_path, capsys):
    err = _fails_then_next_is_checked(tmp_path, capsys, lambda r: r["objects"][0].update(rgba=[1, 0, 0]))
    assert "objects[0].rgba" in err and "4 numbers" in err and "[1, 0, 0]" in err


def test_a_negative_size_is_refused_by_the_check(tmp_path, capsys):
    err = _fails_then_next_is_checked(tmp_path, capsys, lambda r: r["objects"][0].update(size=[0.02, -0.02, 0.02]))
    assert "objects[0].size" in err and "3 numbers" in err and "> 0" in err


@pytest.mark.parametrize("mutate, field, hint", [
    (lambda r: r["objects"][0].update(size=[0.02, 0.02]), "objects[0].size", "3 numbers"),
    (lambda r: r["objects"][0].update(mass=0), "objects[0].mass", "> 0"),
    (lambda r: r["objects"][1].update(inner=[0.05, 0.05, 0.05]), "objects[1].inner", "1 or 2 numbers"),
    (lambda r: r["objects"][1].update(rgba=[0.5, 0.5, 2.0, 1.0]), "objects[1].rgba", "between 0 and 1"),
    (lambda r: r["objects"][1].update(handle=-0.1), "objects[1].handle", ">= 0"),
    (lambda r: r["objects"][0]["spawn"].update(clearance="wide"), "objects[0].spawn.clearance", "a number"),
    (lambda r: r["objects"][0].update(joint_init="half"), "objects[0].joint_init", "a number"),
    (lambda r: r["objects"][0].update(fixed="no"), "objects[0].fixed", "true or false"),
    (lambda r: r.update(language_schedule=["just text"]), "language_schedule[0]", "mapping"),
    (lambda r: r.update(distractors="cube"), "distractors", "list"),
    (lambda r: r["subtasks"][1].update(after="Pick up the cube"), "subtasks[1].after", "list"),
])
def test_malformed_fields_are_reported_not_crashed_on(tmp_path, capsys, mutate, field, hint):
    err = _fails_then_next_is_checked(tmp_path, capsys, mutate)
    assert field in err and hint in err, err


def test_a_folder_is_every_spec_in_it(tmp_path, capsys):
    _spec_file(tmp_path, "a")
    _spec_file(tmp_path, "b", lambda r: r["objects"][0].update(rgba=[1, 0, 0]))
    code, out, err = _check(capsys, tmp_path)
    assert code == 1 and "1 ok, 1 failed" in out and "b.yaml: objects[0].rgba" in err


def test_an_unexpected_error_in_one_file_does_not_stop_the_check(tmp_path, capsys, monkeypatch):
    import teleop.cli.commands.tasks as cmd
    real = cmd.load_spec

    def flaky(path):
        if Path(path).stem == "bad":
            raise RuntimeError("checker bug")
        return real(path)
    monkeypatch.setattr(cmd, "load_spec", flaky)
    err = _fails_then_next_is_checked(tmp_path, capsys)
    assert "internal error" in err and "RuntimeError: checker bug" in err


def test_every_shipped_default_is_a_valid_value():
    from teleop.tasks.objects import KINDS, kind_defaults
    for name, k in KINDS.items():
        for key, value in kind_defaults(name).items():
            assert k.params[key].problem(value) is None, (name, key, value)


def test_build_reports_mujocos_rejection_with_the_file(tmp_path, capsys):
    """The check cannot know every name the robot uses; MuJoCo refuses a body named like one of
    its own, and ``--build`` says so for that file and goes on with the next."""
    def robot_named_cube(r):
        r["objects"][0]["name"] = "left_palm"                               # the robot's left palm body
        for sub in r["subtasks"]:
            sub["predicates"][0]["object"] = "left_palm"
    bad = _spec_file(tmp_path, "bad", robot_named_cube)
    assert _check(capsys, bad)[0] == 0                                      # the spec itself is fine
    err = _fails_then_next_is_checked(tmp_path, capsys, raw=bad.read_bytes(), build=True)
    assert "cannot build the scene" in err and "left_palm" in err and "repeated name" in err


def test_build_task_turns_a_mujoco_value_error_into_a_config_error_naming_the_file(tmp_path):
    spec = load_spec(_spec_file(tmp_path, "tiny"))
    cube = spec.objects[0]
    broken = dataclasses.replace(spec, objects=(dataclasses.replace(cube, params=dict(cube.params, rgba=[1, 0, 0])),
                                                *spec.objects[1:]))
    with pytest.raises(ConfigError, match=r"tiny.yaml: cannot build the scene: .*"):
        build_task(broken)


def test_parse_spec_still_reports_a_non_mapping():
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        parse_spec(["not", "a", "mapping"], "list.yaml")


def _closed_pipe_run(*args: str) -> subprocess.CompletedProcess:
    """Run ``teleop ARGS`` with stdout a pipe whose reader is already gone (``| head`` that exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "teleop", *args], stdout=write, stderr=subprocess.PIPE,
                              cwd=ROOT, text=True, timeout=120, check=False)
    finally:
        os.close(write)


# 141 = 128 + SIGPIPE, what a shell reports for `cmd | head`; argparse's --help swallows a write
# error itself and exits 0
@pytest.mark.parametrize("args, code", [(("tasks", "show", "pick_up_peach"), 141), (("tasks", "list"), 141),
                                        (("--help",), 0)])
def test_a_closed_pipe_is_not_a_traceback(args, code):
    proc = _closed_pipe_run(*args)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == code


def test_head_of_tasks_show_through_a_shell():
    proc = subprocess.run(f"{sys.executable} -m teleop tasks show pick_up_peach | head -n 1", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
