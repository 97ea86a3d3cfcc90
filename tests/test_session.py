"""The control loop through real parts: synthetic operator -> engage -> retarget -> sim -> scorer.
Replay reproduces the live joint targets bit for bit; dropouts hold the robot; engaging never jumps."""
import dataclasses
import json

import numpy as np
import pytest

from recordings.store import TakeStore
from teleop.cli.main import main
from teleop.control.episode import Episode, EpisodeOptions
from devices.frame import Pose
from devices.synthetic import SyntheticOperator
from teleop.control.synthetic.human import HumanNoise
from teleop.control.synthetic.operator import plan_episode

TASK = "put_peach_in_fruit_bowl"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One live synthetic episode recorded into a store (with tremor and tracking dropouts)."""
    store = TakeStore(tmp_path_factory.mktemp("session") / "store")
    store.open()
    episode = Episode(EpisodeOptions(task=TASK, device="synthetic", episode_index=1,
                                     device_options={"dropout_per_s": 0.4}))
    result, take = episode.run(store, operator="tester")
    yield episode, result, take
    store.close()


def test_live_episode_reports_and_records(recorded):
    episode, result, take = recorded
    reports = episode.reports
    assert take.length == len(reports) > 100
    assert [r.tick for r in reports] == list(range(1, len(reports) + 1))
    assert reports[0].engage_state in ("easing", "engaged")
    assert all(r.retarget_status != "idle" for r in reports if not r.marked)
    np.testing.assert_array_equal(take.arrays["progress"], [r.progress for r in reports])
    assert take.meta.retarget_config_hash and "arm:" in take.meta.retarget_config
    assert take.arrays["frame"].shape[1] == 198 and take.arrays["frame"][:, 2].max() > 0


def test_replayed_stream_reproduces_the_live_joint_targets_bit_exactly(recorded):
    _, _, take = recorded
    replay = Episode(EpisodeOptions(task=None, device="replay", device_options={"take": str(take.path)}))
    assert replay.rt.sim.get_state().tolist() == list(take.meta.initial_state)
    actions = []
    replay.run(None, on_tick=lambda r: actions.append(replay.session.action.astype(np.float32)))
    # Same frames, same retarget configuration: the same joint targets, bit for bit, every tick.
    np.testing.assert_array_equal(np.array(actions), take.arrays["actions"])
    np.testing.assert_array_equal([r.progress for r in replay.reports], take.arrays["progress"])


def test_dropouts_hold_the_robot_and_are_marked(recorded):
    """A dropout holds what it lost: the whole robot when no usable hand is left, else the side whose
    hand is lost (the other keeps following: losing one hand used to freeze both arms)."""
    episode, _, take = recorded
    reports = episode.reports
    marked = np.array([r.marked for r in reports])
    assert marked.any(), "the synthetic operator produced no tracking dropout"
    actions = take.arrays["actions"]
    sides = {s: np.r_[episode.retargeter.idx[s]] for s in ("left", "right")}
    one_side = 0
    for t in np.flatnonzero(marked):
        if t == 0:
            continue
        held = reports[t].held_sides or ("left", "right")
        for side in held:
            np.testing.assert_array_equal(actions[t][sides[side]], actions[t - 1][sides[side]])
        one_side += len(reports[t].held_sides) == 1
    assert one_side > 0, "no single-hand dropout: the test does not see per-side holding"
    assert take.arrays["flags"][marked, 1].all()                          # 'held' flag recorded


def _shifted_stream(stream, offset, engage_after: float):
    """The operator stands 20 cm off (as if they had walked) and engages at ``engage_after`` s."""
    def frame_at(t, sequence, received):
        frame = stream.frame_at(t, sequence, received)
        hands = {}
        for side in ("left", "right"):
            hand = frame.hand(side)
            hands[side] = None if hand is None else dataclasses.replace(
                hand, wrist=Pose(hand.wrist.position + offset, hand.wrist.quat), keypoints=hand.keypoints + offset)
        return dataclasses.replace(frame, left=hands["left"], right=hands["right"], engage=t >= engage_after)
    return frame_at


def test_nothing_moves_before_engage_and_engaging_does_not_jump():
    episode = Episode(EpisodeOptions(task=TASK, device="synthetic", episode_index=0,
                                     device_options={"dropout_per_s": 0.0}))
    stream = plan_episode(episode.rt, episode.retargeter, seed=0, noise=HumanNoise(dropout_per_s=0.0))
    device = SyntheticOperator(_shifted_stream(stream, np.array([0.2, -0.1, 0.05]), engage_after=1.6),
                               stream.duration)
    episode.session.attach(device)
    device.connect()
    start = episode.rt.sim.joint_positions
    reports, actions, drift = [], [], []
    for _ in range(120):
        reports.append(episode.session.tick())
        actions.append(episode.session.action.copy())
        drift.append(np.abs(episode.rt.sim.joint_positions - start).max())
    engaged_at = next(i for i, r in enumerate(reports) if r.engage_state != "disengaged")
    assert engaged_at == 40                                   # 1.6 s at 25 Hz
    assert max(drift[:engaged_at]) < 1e-3                     # the robot stayed where it was
    steps = np.abs(np.diff(np.array(actions), axis=0)).max(axis=1)
    assert steps[:engaged_at - 1].max() == 0.0                # held still while disengaged
    assert steps[engaged_at - 1:engaged_at + 5].max() <= 1.0 * 0.04 + 1e-6   # eases in: no jump
    assert reports[-1].engage_state == "engaged"              # then follows the operator


def test_record_command_runs_an_episode_and_saves_the_take(tmp_path, capsys):
    code = main(["record", "--device", "synthetic", "--task", TASK, "--episode", "2", "--store", str(tmp_path),
                 "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["task"] == TASK and summary["ticks"] > 100 and summary["take"].endswith(".h5")
    assert set(summary["latch_steps"]) == {"Pick up the peach", "Place the peach in the fruit_bowl"}


def test_record_command_rejects_unknown_task(tmp_path, capsys):
    assert main(["record", "--task", "no_such_task", "--no-save"]) == 2
    assert "unknown task 'no_such_task'" in capsys.readouterr().err
