"""Validation replays a real take from its initial state: it passes a real success and fails
tampered, truncated and foreign-model takes with a reason."""
import h5py
import numpy as np
import pytest

from recordings.store import TakeStore
from recordings.validate import validate_in_process, validate_take
from validation_util import cube_runtime, record_cube_take


@pytest.fixture(scope="module")
def cube_take(tmp_path_factory):
    store = TakeStore(tmp_path_factory.mktemp("validate") / "store")
    store.open()
    take, result = record_cube_take(store)
    assert result.strict_success == 1, result
    yield take
    store.close()


def _copy(take, tmp_path, name="copy.h5"):
    target = tmp_path / name
    target.write_bytes(take.path.read_bytes())
    return target


def test_real_take_passes_in_a_separate_process(cube_take):
    report = validate_in_process(cube_take.path, runtime_for=cube_runtime)
    assert report.passed, report.reason
    assert report.strict_success == 1 and report.progress == 100.0
    assert report.latch_steps["Pick up the cube"] is not None
    assert report.max_joint_error == 0.0 and report.max_object_error == 0.0   # bit-exact replay
    assert report.ticks == cube_take.length


def test_tampered_actions_fail_with_a_reason(cube_take, tmp_path):
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        actions = h5["data/demo_0/actions"]
        hands = slice(36, 58)                       # open the right hand halfway through the lift
        tampered = actions[()]
        tampered[len(tampered) // 2:, hands] = 0.0
        actions[...] = tampered
    report = validate_take(path, runtime_for=cube_runtime)
    assert not report.passed
    assert "Pick up the cube" in report.reason
    assert report.max_object_error > 0.01           # the replay diverged from the recorded states


def test_take_recorded_under_another_model_fails(cube_take, tmp_path):
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        import json
        meta = json.loads(h5["data/demo_0"].attrs["meta"])
        meta["model_fingerprint"] = "00000000deadbeef"
        h5["data/demo_0"].attrs["meta"] = json.dumps(meta)
    report = validate_take(path, runtime_for=cube_runtime)
    assert not report.passed and "recorded under another model (00000000deadbeef)" in report.reason


def test_nan_actions_and_unreadable_files_fail_cleanly(cube_take, tmp_path):
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        h5["data/demo_0/actions"][3, 0] = np.nan
    assert "NaN" in validate_take(path, runtime_for=cube_runtime).reason
    broken = _copy(cube_take, tmp_path, "broken.h5")
    broken.write_bytes(broken.read_bytes()[:2000])
    report = validate_take(broken, runtime_for=cube_runtime)
    assert not report.passed and str(broken) in report.reason


def test_unknown_task_fails_with_choices(cube_take):
    report = validate_take(cube_take.path)          # default factory: shipped tasks only
    assert not report.passed and "unknown task 'pick_up_test_cube'" in report.reason
