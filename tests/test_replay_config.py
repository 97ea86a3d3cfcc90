"""Replaying a take's operator stream uses the take's own retarget configuration (and says so);
``--retarget`` re-retargets on purpose and the new take records which configuration it used."""
from __future__ import annotations

import json

import numpy as np
import pytest

from recordings.takefile import read_take
from retarget.config import CONFIG_DIR
from teleop.cli.main import main

TASK = "put_peach_in_fruit_bowl"
DEFAULT = (CONFIG_DIR / "bidex.yaml").read_text()


def _record(args: list[str], store, capsys) -> tuple[dict, str]:
    assert main(["record", *args, "--store", str(store), "--json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out.strip().splitlines()[-1]), err


@pytest.fixture(scope="module")
def tuned_take(tmp_path_factory):
    root = tmp_path_factory.mktemp("replay-config")
    tuned = root / "tuned.yaml"
    tuned.write_text(DEFAULT.replace("hand_filter: {min_cutoff_hz: 1.0, beta: 20.0",
                                     "hand_filter: {min_cutoff_hz: 4.0, beta: 5.0"))
    assert tuned.read_text() != DEFAULT
    code = main(["record", "--device", "synthetic", "--task", TASK, "--max-seconds", "3", "--retarget", str(tuned),
                 "--store", str(root / "store"), "--json"])
    assert code == 0
    takes = sorted((root / "store").rglob("*.h5"))
    return root, tuned, read_take(takes[-1])


def test_replay_uses_the_takes_own_config_and_reproduces_its_actions(tuned_take, capsys):
    root, tuned, take = tuned_take
    capsys.readouterr()
    summary, err = _record(["--device", "replay", "--from", str(take.path)], root / "replayed", capsys)
    assert f"the take's own (hash {take.meta.retarget_config_hash})" in err
    replayed = read_take(summary["take"])
    np.testing.assert_array_equal(replayed.arrays["actions"], take.arrays["actions"])
    assert replayed.meta.retarget_config == tuned.read_text()


def test_retarget_flag_re_retargets_on_purpose_and_the_new_take_says_with_what(tuned_take, capsys):
    root, _, take = tuned_take
    capsys.readouterr()
    default = CONFIG_DIR / "bidex.yaml"
    summary, err = _record(["--device", "replay", "--from", str(take.path), "--retarget", str(default)],
                           root / "re-retargeted", capsys)
    assert "re-retargeting a take recorded with hash " + take.meta.retarget_config_hash in err
    redone = read_take(summary["take"])
    assert redone.meta.retarget_config == DEFAULT
    assert redone.meta.retarget_config_hash != take.meta.retarget_config_hash
    assert not np.array_equal(redone.arrays["actions"], take.arrays["actions"])
