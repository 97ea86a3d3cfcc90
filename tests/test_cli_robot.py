"""The `teleop` command: robot info, bench sim, and clean errors for bad parameter files."""
import json
import subprocess
import sys

import pytest
import yaml

from teleop.cli.main import main
from teleop.core.errors import ConfigError
from teleop.robot import DEFAULT_PARAMS, load_params


def test_robot_info_json(capsys):
    assert main(["robot", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["nu"] == 58 and info["nq"] >= 58 and info["nv"] >= 58
    assert info["timestep"] == 0.002 and info["control_hz"] == 25
    assert info["cameras"] == ["head", "left_wrist", "right_wrist"]
    assert len(info["actions"]) == 58
    assert info["actions"][0] == {"name": "left_arm_j1", "lower": -2.9007, "upper": 2.9007}
    assert all(a["lower"] < a["upper"] for a in info["actions"])


def test_bench_sim_json(capsys):
    assert main(["bench", "sim", "--json", "--ticks", "20"]) == 0
    figures = json.loads(capsys.readouterr().out)
    for key in ("physics_steps_per_s", "realtime_factor", "tick_ms_p50", "tick_ms_p99"):
        assert figures[key] > 0


def test_console_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "teleop", "robot", "info"], capture_output=True, text=True,
                         check=True).stdout
    assert "nu=58" in out


def _write(tmp_path, mutate):
    raw = yaml.safe_load(DEFAULT_PARAMS.read_text())
    mutate(raw)
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["physics"].update(integrator="verlet"),
     r"physics.integrator: 'verlet' is not one of .*'implicitfast'"),
    (lambda r: r["arm"]["links"][0].pop("kp"), r": arm.links\[0\]: missing field 'kp'"),
    (lambda r: r["hand"].update(colour=1), r": hand: unknown field 'colour'; valid fields are"),
    (lambda r: r["arm"].update(home=[0] * 7), r"arm.home\[3\] = 0 is outside the joint range"),
    (lambda r: r["physics"].update(control_hz=30), r"whole number of substeps"),
])
def test_bad_parameter_files_name_file_and_field(tmp_path, mutate, message):
    path = _write(tmp_path, mutate)
    with pytest.raises(ConfigError, match=message) as err:
        load_params(path)
    assert str(path) in str(err.value)


def test_bad_parameter_file_via_cli_exits_cleanly(tmp_path, capsys):
    path = _write(tmp_path, lambda r: r["physics"].update(cone="round"))
    assert main(["robot", "info", "--params", str(path)]) == 2
    err = capsys.readouterr().err
    assert "teleop: error:" in err and "'round' is not one of 'pyramidal' or 'elliptic'" in err


def test_unreadable_parameter_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("physics: [unclosed")
    with pytest.raises(ConfigError, match="cannot read robot parameters"):
        load_params(path)
