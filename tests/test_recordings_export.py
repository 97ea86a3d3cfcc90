"""Export to LeRobotDataset v3: loads with lerobot, matches the takes and a fresh render, resumes
after SIGKILL, and runs as Ray tasks on a local Ray instance."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from recordings.export import export_dataset
from recordings.render import StateRenderer
from recordings.replay import scene_from_take
from recordings.store import TakeStore
from takes_util import record_take
from teleop.cli.main import main
from teleop.core.errors import TeleopError
from teleop.sim import Sim

LeRobotDataset = pytest.importorskip("lerobot.datasets.lerobot_dataset").LeRobotDataset
REPO = "bidex/teleop"
PLAN = [("pick_cube", 22, "validated_pass"), ("stack", 30, "validated_pass"), ("pick_cube", 26, "validated_pass"),
        ("pick_cube", 24, "validated_fail"), ("stack", 20, "recorded")]


@pytest.fixture(scope="module")
def store_root(tmp_path_factory, scene):
    root = tmp_path_factory.mktemp("export") / "store"
    with TakeStore(root) as store:
        for i, (task, ticks, status) in enumerate(PLAN):
            path, _ = record_take(store, Sim(scene), ticks=ticks, name=f"take{i}", task_id=task)
            take = store.add(path)
            if status != "recorded":
                store.set_review(take.meta.take_id, status)
    return root


@pytest.fixture(scope="module")
def exported(store_root):
    """(summary, dataset root, takes in episode order) of one uninterrupted export."""
    out = store_root.parent / "dataset"
    with TakeStore(store_root) as store:
        passed = [r for r in store.rows(status="validated_pass")]
        passed.sort(key=lambda r: (r.task_id, r.created, r.take_id))
        takes = [store.load(r.take_id) for r in passed]
    summary = export_dataset(store_root, out, workers=1, progress=False)
    return summary, out, takes


def _episodes(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "meta" / "bidex_episodes.jsonl").read_text().splitlines()]


def _actions(root: Path) -> np.ndarray:
    ds = LeRobotDataset(REPO, root=root)
    return np.stack([np.asarray(a) for a in ds.hf_dataset["action"]])


def test_dataset_loads_and_matches_the_takes(exported):
    summary, root, takes = exported
    assert summary.ok and summary.episodes == 3 and summary.streams == 6
    assert summary.frames == sum(t.length for t in takes) == 22 + 26 + 30
    ds = LeRobotDataset(REPO, root=root)
    assert ds.num_episodes == 3 and len(ds) == summary.frames
    assert [e["take_id"] for e in _episodes(root)] == [t.meta.take_id for t in takes]
    start = 0
    for ep, take in zip(_episodes(root), takes):
        assert ep["frames"] == take.length and ep["seed_index"] == take.meta.seed_index
        np.testing.assert_array_equal(ep["initial_state"], take.initial_state)
        first, last = ds[start], ds[start + take.length - 1]
        assert int(first["episode_index"]) == ep["episode_index"] and int(last["frame_index"]) == take.length - 1
        np.testing.assert_array_equal(first["action"].numpy(), take.arrays["actions"][0])
        np.testing.assert_allclose(last["observation.state"].numpy(), take.arrays["obs"][-1])
        assert first["task"] == "Do the thing." and last["task"] == "Now the other."
        assert float(first["subtask.progress"]) == 0.0
        assert float(last["subtask.progress"]) == take.arrays["progress"][take.length - 2] > 0
        start += take.length
    np.testing.assert_array_equal(_actions(root), np.concatenate([t.arrays["actions"] for t in takes]))


def test_decoded_video_matches_a_fresh_render(exported):
    _, root, takes = exported
    ds = LeRobotDataset(REPO, root=root)
    take, t = takes[1], 17
    item = ds[takes[0].length + t]
    sim = Sim(scene_from_take(take))
    sim.set_state(take.arrays["states"][t])
    with StateRenderer(sim.model, sim.scene.layout.cameras) as renderer:
        fresh = renderer.render(sim.data)
    assert len(fresh) == 6
    for key, image in fresh.items():
        decoded = item[key].numpy()
        if image.shape[-1] == 3:    # RGB decodes to (3, H, W) floats in [0, 1]
            err = np.abs(decoded.transpose(1, 2, 0) - image / 255.0).mean()
            assert err < 8 / 255, (key, err)
        else:                       # depth decodes to (1, H, W) millimetres
            err_mm = np.abs(decoded[0] - image[..., 0] * 1000.0).mean()
            assert err_mm < 5.0, (key, err_mm)
    other = ds[takes[0].length + 2]["observation.images.left_wrist"].numpy()
    assert np.abs(other.transpose(1, 2, 0) - fresh["observation.images.left_wrist"] / 255.0).mean() > 0


def test_stats_per_task_and_mixture(exported):
    _, root, takes = exported
    stats = json.loads((root / "meta" / "bidex_stats.json").read_text())
    assert set(stats["tasks"]) == {"pick_cube", "stack"}
    mix = np.concatenate([t.arrays["actions"] for t in takes]).astype(np.float64)
    a = stats["mixture"]["action"]
    assert a["count"] == len(mix) and a["exact_percentiles"]
    np.testing.assert_allclose(a["mean"], mix.mean(0), atol=1e-6)
    np.testing.assert_allclose(a["std"], mix.std(0), atol=1e-6)
    np.testing.assert_allclose(a["p01"], np.percentile(mix.astype(np.float32), 1, axis=0), atol=1e-6)
    np.testing.assert_allclose(a["p99"], np.percentile(mix.astype(np.float32), 99, axis=0), atol=1e-6)
    stack = np.concatenate([t.arrays["obs"] for t in takes if t.meta.task_id == "stack"]).astype(np.float64)
    np.testing.assert_allclose(stats["tasks"]["stack"]["observation.state"]["mean"], stack.mean(0), atol=1e-5)
    assert len(stats["tasks"]["pick_cube"]["observation.state"]["p99"]) == 130


def test_takes_are_marked_exported_and_out_is_not_overwritten(exported, store_root):
    _, root, takes = exported
    with TakeStore(store_root) as store:
        rows = {r.take_id: r for r in store.rows(status="exported")}
    assert set(rows) == {t.meta.take_id for t in takes}
    assert all(r.report["exported_to"] == str(root) for r in rows.values())
    with pytest.raises(TeleopError, match="already exists"):
        export_dataset(store_root, root, progress=False)
    assert not root.with_name(root.name + ".partial").exists()


def test_bad_selection_names_the_choices(store_root, tmp_path):
    with pytest.raises(TeleopError, match="'pick_cube' or 'stack'"):
        export_dataset(store_root, tmp_path / "x", tasks=["pour"], progress=False)
    with TakeStore(tmp_path / "empty"):
        pass
    with pytest.raises(TeleopError, match="no validated-pass takes"):
        export_dataset(tmp_path / "empty", tmp_path / "y", progress=False)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_a_failing_take_fails_the_export_but_keeps_finished_shards(scene, tmp_path, capsys):
    root, ids, paths = tmp_path / "store", [], []
    with TakeStore(root) as store:
        for i in range(2):
            path, _ = record_take(store, Sim(scene), ticks=20, name=f"bad{i}", task_id="t")
            ids.append(store.add(path).meta.take_id)
            paths.append(path)
            store.set_review(ids[-1], "validated_pass")
        with h5py.File(paths[1], "r+") as h5:     # recorded under another model build
            meta = json.loads(h5["data/demo_0"].attrs["meta"])
            h5["data/demo_0"].attrs["meta"] = json.dumps({**meta, "model_fingerprint": "0" * 16})
    out = tmp_path / "ds"
    assert main(["export", "--store", str(root), "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"FAILED {ids[1]}" in text and "recorded under 0000000000000000" in text
    assert not out.exists()
    assert (tmp_path / "ds.partial" / "shards" / ids[0] / "bidex_shard.json").exists()
    paths[1].write_bytes(b"not a take")
    with pytest.raises(TeleopError, match="unreadable take file"):
        export_dataset(root, out, progress=False)


def _same_dataset(a: Path, b: Path) -> None:
    da, db = LeRobotDataset(REPO, root=a), LeRobotDataset(REPO, root=b)
    assert (len(da), da.num_episodes) == (len(db), db.num_episodes)
    assert [e["take_id"] for e in _episodes(a)] == [e["take_id"] for e in _episodes(b)]
    np.testing.assert_array_equal(_actions(a), _actions(b))
    stats = [json.loads((root / "meta/bidex_stats.json").read_text()) for root in (a, b)]
    assert stats[0] == stats[1]


def test_export_killed_half_way_resumes_to_the_same_dataset(exported, store_root, tmp_path):
    _, reference, _ = exported
    out = tmp_path / "resumed"
    cmd = [sys.executable, "-m", "teleop", "export", "--store", str(store_root), "--out", str(out), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    shards = out.with_name("resumed.partial") / "shards"
    deadline = time.monotonic() + 120
    while not list(shards.glob("*/bidex_shard.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "export finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    summary = export_dataset(store_root, out, progress=False)
    assert summary.ok and summary.resumed >= 1 and summary.resumed + summary.rendered == 3
    assert not out.with_name("resumed.partial").exists()
    _same_dataset(reference, out)


def test_cli_ray_path_on_a_local_instance(exported, store_root, tmp_path, capsys):
    ray = pytest.importorskip("ray", reason="ray is not installed (optional extra 'cluster')")
    _, _, takes = exported
    stack = [t for t in takes if t.meta.task_id == "stack"]
    out = tmp_path / "ray"
    try:
        code = main(["export", "--store", str(store_root), "--out", str(out), "--tasks", "stack",
                     "--ray", "local", "--workers", "2", "--json"])
    finally:
        ray.shutdown()
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["ok"] and summary["backend"] == "ray:local" and summary["rendered"] == 1
    assert [e["take_id"] for e in _episodes(out)] == [stack[0].meta.take_id]
    np.testing.assert_array_equal(_actions(out), stack[0].arrays["actions"])


def test_cli_errors_exit_2_with_a_message(exported, store_root, capsys):
    _, root, _ = exported
    assert main(["export", "--store", str(store_root), "--out", str(root)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export", "--store", str(store_root), "--out", str(root) + "2", "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_lerobot_streaming_encoder_internals_export_relies_on_are_pinned(tmp_path):
    """Export's back-pressure and dropped-frame checks read two private attributes of lerobot's
    streaming encoder (no public API in 0.6): a lerobot that renames them fails here and in export,
    loudly, instead of silently dropping frames."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from recordings.export_shard import ExportSettings, encoders, streaming_encoder_internals
    rgb, depth = encoders(ExportSettings())
    features = {"observation.images.cam": {"dtype": "video", "shape": (16, 16, 3),
                                           "names": ["height", "width", "channels"]}}
    ds = LeRobotDataset.create("test/pin", fps=25, features=features, root=tmp_path / "ds", use_videos=True,
                               rgb_encoder=rgb, depth_encoder=depth, streaming_encoding=True)
    try:
        queues, dropped = streaming_encoder_internals(ds)
        assert isinstance(queues, dict) and isinstance(dropped, dict)
    finally:
        ds.finalize()

    class Renamed:
        writer = None
    with pytest.raises(TeleopError, match="no longer has writer._streaming_encoder._frame_queues"):
        streaming_encoder_internals(Renamed())


def test_multi_task_stats_json_is_exact_and_lerobot_normalises_within_it(exported):
    """The mixture in meta/stats.json (what lerobot's training reads) and every task in
    bidex_stats.json are exact over all frames: no averaged per-episode quantiles."""
    from test_dataset_stats import _frames, assert_exact_and_safe, assert_lerobot_normalises_within
    _, root, takes = exported
    ds = LeRobotDataset(REPO, root=root)
    assert_exact_and_safe(ds.meta.stats, _frames(ds))
    assert_lerobot_normalises_within(ds)
    side = json.loads((root / "meta" / "bidex_stats.json").read_text())
    for task in ("pick_cube", "stack"):
        mine = [t for t in takes if t.meta.task_id == task]
        frames = {"action": np.concatenate([t.arrays["actions"] for t in mine]),
                  "observation.state": np.concatenate([t.arrays["obs"] for t in mine])}
        assert_exact_and_safe(side["tasks"][task], frames)


def test_observation_poses_are_the_forward_kinematics_of_the_recorded_states(exported):
    """Every exported observation.state equals the observation of its recorded state, the wrist
    poses included (they were once a physics substep behind the joints)."""
    _, root, takes = exported
    ds = LeRobotDataset(REPO, root=root)
    exported_obs = _frames_of(ds, "observation.state")
    start = 0
    for take in takes:
        sim = Sim(scene_from_take(take))
        for t, state in enumerate(take.arrays["states"]):
            sim.set_state(state)
            np.testing.assert_array_equal(exported_obs[start + t], sim.observation())
        start += take.length


def _frames_of(ds, key: str) -> np.ndarray:
    return np.stack([np.asarray(v, np.float32) for v in ds.hf_dataset[key]])
