"""meta/stats.json carries exact statistics that lerobot's own loader and normalisers read: no
channel with std 0, quantiles equal to numpy's over all frames, normalised data inside them."""
import json

import numpy as np
import pytest
import torch

from recordings.dataset_stats import MIN_STD, QUANTILES, SAFE_STD, quantile_key
from recordings.exact_quantiles import exact_quantiles
from recordings.export import export_dataset
from recordings.store import TakeStore
from takes_util import record_actions
from teleop.core.seeding import stable_rng
from teleop.sim import Sim

LeRobotDataset = pytest.importorskip("lerobot.datasets.lerobot_dataset").LeRobotDataset
REPO = "bidex/teleop"
HELD = 20          # an action channel held exactly still
NARROW = 13        # an action channel moving ~1e-3 rad around 2 rad (lerobot's float32 variance: std 0)


def test_quantiles_are_the_ones_lerobot_writes_and_reads():
    from lerobot.datasets.compute_stats import DEFAULT_QUANTILES
    assert tuple(DEFAULT_QUANTILES) == QUANTILES
    assert [quantile_key(q) for q in QUANTILES] == ["q01", "q10", "q50", "q90", "q99"]


def test_exact_quantiles_equal_numpy_over_streamed_batches():
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 999):
        data = rng.normal(0, 1, (n, 6)).astype(np.float32)
        data[:, 1] = 3.25                                   # constant
        data[: n // 2, 2] = -0.0                            # signed zeros
        data[:, 3] = np.round(data[:, 3] * 2) / 2           # heavy ties
        data[:, 4] *= 1e-30                                 # subnormal-ish magnitudes
        data[:, 5] = 2.0 + 9e-4 * data[:, 5]                # narrow around a large mean
        parts = np.array_split(data, 4)
        got = exact_quantiles(lambda parts=parts: iter(parts), 6, n, QUANTILES)
        np.testing.assert_array_equal(got, np.quantile(data.astype(np.float64), QUANTILES, axis=0))


def _normaliser(stats: dict, mode: str):
    from lerobot.configs.types import FeatureType, NormalizationMode, PolicyFeature
    from lerobot.processor import NormalizerProcessorStep
    features = {"action": PolicyFeature(FeatureType.ACTION, (58,)),
                "observation.state": PolicyFeature(FeatureType.STATE, (130,))}
    norm = NormalizationMode(mode)
    return NormalizerProcessorStep(features=features, norm_map={FeatureType.ACTION: norm, FeatureType.STATE: norm},
                                   stats=stats)


def _normalised(ds, mode: str) -> dict[str, np.ndarray]:
    from lerobot.processor import TransitionKey, create_transition
    frames = _frames(ds)
    step = _normaliser(ds.meta.stats, mode)
    out = step(create_transition(observation={"observation.state": torch.from_numpy(frames["observation.state"])},
                                 action=torch.from_numpy(frames["action"])))
    return {"action": out[TransitionKey.ACTION].double().numpy(),
            "observation.state": out[TransitionKey.OBSERVATION]["observation.state"].double().numpy()}


def _frames(ds) -> dict[str, np.ndarray]:
    return {k: np.stack([np.asarray(v, np.float32) for v in ds.hf_dataset[k]]) for k in ("action", "observation.state")}


def assert_exact_and_safe(stats: dict, frames: dict[str, np.ndarray]) -> None:
    for key, values in frames.items():
        exact = values.astype(np.float64)
        s = {k: np.asarray(v, np.float64) for k, v in stats[key].items()}
        assert int(np.atleast_1d(s["count"])[0]) == len(exact)
        np.testing.assert_allclose(s["mean"], exact.mean(0), rtol=1e-12, atol=1e-12)
        true_std = exact.std(0)
        np.testing.assert_allclose(s["std"], np.where(true_std < MIN_STD, SAFE_STD, true_std), rtol=1e-9, atol=1e-12)
        assert (s["std"] > 0).all(), f"{key}: a channel with std 0"
        np.testing.assert_array_equal(s["min"], exact.min(0))
        np.testing.assert_array_equal(s["max"], exact.max(0))
        for q in QUANTILES:
            np.testing.assert_array_equal(s[quantile_key(q)], np.quantile(exact, q, axis=0), err_msg=f"{key} {q}")


def assert_lerobot_normalises_within(ds) -> None:
    stats, frames = ds.meta.stats, _frames(ds)
    n = len(frames["action"])
    for key, z in _normalised(ds, "MEAN_STD").items():
        s = stats[key]
        bound = np.maximum(np.abs(s["max"] - s["mean"]), np.abs(s["min"] - s["mean"])) / s["std"]
        assert np.isfinite(z).all() and (np.abs(z) <= bound + 1e-3).all()
        assert np.abs(z).max() <= np.sqrt(n) + 1e-3        # Samuelson: never more for exact mean/std
    for key, z in _normalised(ds, "MIN_MAX").items():
        assert (np.abs(z) <= 1 + 1e-5).all(), key
    for key, z in _normalised(ds, "QUANTILES").items():
        outside = (np.abs(z) > 1 + 1e-5).mean(axis=0)      # below q01 or above q99: <= 1 % each
        assert (outside <= 0.02 + 2.0 / n).all(), (key, outside.max())


@pytest.fixture(scope="module")
def single(tmp_path_factory, scene):
    root = tmp_path_factory.mktemp("stats") / "store"
    sim = Sim(scene)
    sim.reset(0)
    rng = stable_rng("stats-single")
    actions = np.clip(sim.joint_positions + np.cumsum(rng.normal(0, 0.01, (40, 58)), axis=0), sim.ctrl_low,
                      sim.ctrl_high)
    actions[:, HELD] = sim.joint_positions[HELD]
    actions[:, NARROW] = 2.0 + 9e-4 * rng.normal(size=40)
    with TakeStore(root) as store:
        take = store.add(record_actions(store, sim, actions, task_id="narrow"))
        store.set_review(take.meta.take_id, "validated_pass")
    out = root.parent / "ds"
    assert export_dataset(root, out, progress=False).ok
    return out


def test_single_take_stats_json_is_exact_with_a_safe_std(single):
    ds = LeRobotDataset(REPO, root=single)
    assert_exact_and_safe(ds.meta.stats, _frames(ds))
    action = ds.meta.stats["action"]
    assert action["std"][HELD] == SAFE_STD
    np.testing.assert_allclose(action["std"][NARROW], 9e-4, rtol=0.35)
    side = json.loads((single / "meta" / "bidex_stats.json").read_text())
    assert HELD in side["mixture"]["action"]["std_floored"] and side["mixture"]["action"]["std_raw"][HELD] == 0.0
    assert side["tasks"]["narrow"]["action"]["q99"] == side["mixture"]["action"]["q99"]


def test_single_take_lerobot_normalisation_stays_within_the_exact_stats(single):
    assert_lerobot_normalises_within(LeRobotDataset(REPO, root=single))
