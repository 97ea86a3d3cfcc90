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


# -- issue 13.2: tampered takes passed ("PASS: strict success on replay") -------------------------
def _object_qpos(demo):
    """The cube's x position inside every serialised state (its free joint's first qpos)."""
    import mujoco
    from teleop.sim import HEADER
    model = cube_runtime().sim.model
    free = next(j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE)
    return HEADER + 1 + int(model.jnt_qposadr[free])


def _edit(name, fn):
    def edit(demo):
        data = demo[name][()]
        fn(demo, data)
        del demo[name]
        demo.create_dataset(name, data=data)
    return edit


TAMPERED = {
    "actions +0.02 rad on one joint": (_edit("actions", lambda d, a: a.__setitem__((slice(None), 3), a[:, 3] + 0.02)),
                                       "does not reproduce the recording"),
    "1e30 in actions": (_edit("actions", lambda d, a: a.__setitem__((10, 20), 1e30)), "leaves the control range"),
    "recorded states moved 10 cm": (_edit("states", lambda d, s: s.__setitem__(
        (slice(None), _object_qpos(d)), s[:, _object_qpos(d)] + 0.10)), "does not start at initial_state"),
    "observations zeroed": (_edit("obs/state", lambda d, o: o.fill(0.0)), "on replay, 0 recorded"),
    "NaN in recorded states": (_edit("states", lambda d, s: s.__setitem__((20, 12), np.nan)),
                               "'states' contains NaN or infinite values (first at tick 20, column 12)"),
    "wrong-width subtask_latched": (lambda demo: _widen_subtasks(demo), "dataset 'subtask_latched' has shape"),
}


def _widen_subtasks(demo):
    latched = demo["subtask_latched"][()]
    del demo["subtask_latched"]
    demo.create_dataset("subtask_latched", data=np.concatenate([latched, latched, latched], axis=1))


@pytest.mark.parametrize("variant", sorted(TAMPERED))
def test_every_tampered_variant_fails_with_its_reason(cube_take, tmp_path, variant):
    edit, expected = TAMPERED[variant]
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        edit(h5["data/demo_0"])
    report = validate_take(path, runtime_for=cube_runtime)
    assert not report.passed, variant
    assert expected in report.reason, report.reason
    assert report.problems and not report.unreadable


def test_moved_states_fail_on_replay_even_when_the_first_state_is_left_alone(cube_take, tmp_path):
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        states = h5["data/demo_0/states"]
        moved = states[()]
        moved[30:, _object_qpos(None)] += 0.10
        states[...] = moved
    report = validate_take(path, runtime_for=cube_runtime)
    assert not report.passed and report.divergence_tick == 30
    assert "qpos of joint" in report.reason and "differs by 0.1" in report.reason


def test_a_pass_states_its_build_and_a_foreign_build_gets_the_stated_tolerance(cube_take, tmp_path):
    import json
    report = validate_take(cube_take.path, runtime_for=cube_runtime)
    assert report.passed and report.comparison.startswith("bit-exact (same build: mujoco ")
    assert report.build == report.take_build and report.tolerance == 0.0 and len(report.digest) == 64
    path = _copy(cube_take, tmp_path)
    with h5py.File(path, "r+") as h5:
        meta = json.loads(h5["data/demo_0"].attrs["meta"])
        meta["software"]["machine"] = "riscv64"
        h5["data/demo_0"].attrs["meta"] = json.dumps(meta)
    foreign = validate_take(path, runtime_for=cube_runtime)
    assert foreign.passed and foreign.tolerance == 1e-3
    assert "within 0.001 (recorded on " in foreign.reason and "riscv64" in foreign.reason
