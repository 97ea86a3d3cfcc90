"""A real, successful take of the test cube task, recorded through the real runtime."""
from pathlib import Path

from grasping import grasp_and_lift, item_at
from recordings.recorder import EpisodeRecorder
from teleop.tasks import TaskRuntime, build_task, load_spec

CUBE_SPEC = Path(__file__).parent / "data" / "pick_up_test_cube.yaml"
CUBE_APPROACH = dict(pitch=0.6, reach=0.10, height=0.11, half_height=0.025)


def cube_runtime(task_id: str = "pick_up_test_cube", horizon: int | None = None) -> TaskRuntime:
    """Runtime factory for the test task (picklable: a module-level function)."""
    assert task_id == "pick_up_test_cube", task_id
    return TaskRuntime(build_task(load_spec(CUBE_SPEC)), horizon=horizon)


def record_cube_take(store, hold: float = 1.0):
    rt = cube_runtime()
    rt.reset(0, 0)
    rec = EpisodeRecorder(store, rt, operator="tester", device="scripted").start()
    grasp_and_lift(rt.sim, item_at(rt.sim, "cube", CUBE_APPROACH), side="right", hold=hold, step=rec.record)
    return rec.finish(), rt.result()
