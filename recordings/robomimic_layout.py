"""The parts of robomimic's HDF5 contract a take adds to its own arrays: rewards, dones, next_obs.

robomimic (``robomimic.utils.dataset.SequenceDataset``) reads, per ``data/demo_N``: ``actions``,
``obs/<key>``, ``next_obs/<key>`` (with ``load_next_obs=True``), ``rewards``, ``dones`` and the
``num_samples`` attribute, and ``data.attrs["env_args"]`` as ``{env_name, type, env_kwargs}``.

- ``rewards[t]`` (float64): the task progress gained by action ``t``, as a fraction of the whole
  task: ``(progress[t] - progress[t-1]) / 100`` with ``progress[-1] = 0`` (the recorded
  ``progress[t]`` is the score after action ``t``). Their sum is the final progress / 100.
- ``dones[t]`` (int64): 1 on the last tick only (the episode ends after its last action;
  robomimic's convention for its own datasets), 0 elsewhere.
- ``next_obs/state[t]``: the observation after action ``t``: ``obs[t + 1]`` for ``t < T - 1``; for
  the last tick the recorder's own observation after the last step, or, for a take without it (a
  crashed recording, an older writer), the observation of re-simulating that last step from
  ``states[T-1]`` with ``actions[T-1]`` and the scene events of tick ``T`` (physics is
  deterministic, so this is exactly what the recorder would have seen; tested).
"""
from __future__ import annotations

import numpy as np

# robomimic has no environment type for a custom MuJoCo task suite; GYM_TYPE (2) is its generic
# one. ``env_name`` is our task id and ``env_kwargs`` our episode identity.
ROBOMIMIC_GYM_TYPE = 2


def rewards_from_progress(progress: np.ndarray) -> np.ndarray:
    p = np.asarray(progress, np.float64)
    return np.diff(p, prepend=0.0) / 100.0


def dones_for(length: int) -> np.ndarray:
    dones = np.zeros(length, np.int64)
    if length:
        dones[-1] = 1
    return dones


def next_obs(obs: np.ndarray, last: np.ndarray | None) -> np.ndarray:
    """(T, D) observations after each action; ``last`` is the one after the final action."""
    if obs.shape[0] == 0:
        return obs.copy()
    if last is None:
        raise ValueError("the observation after the last action is needed")
    return np.concatenate([obs[1:], np.asarray(last, obs.dtype)[None]], axis=0)


def resimulate_last_obs(model_xml: str, fingerprint: str, state: np.ndarray, action: np.ndarray,
                        events: list[dict], tick: int, where) -> np.ndarray:
    """The observation after stepping ``action`` from ``state`` and applying the events of ``tick``."""
    from recordings.replay import scene_for
    from recordings.take_events import apply_events
    from teleop.sim import Sim

    sim = Sim(scene_for(model_xml, fingerprint, where))
    sim.set_state(state)
    sim.step(np.asarray(action, np.float64))
    apply_events(sim.model, sim.data, events, tick)
    return sim.observation()
