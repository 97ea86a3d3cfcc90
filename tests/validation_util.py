"""A real, successful take of the test cube task, recorded through the real runtime."""
from pathlib import Path

from grasping import grasp_and_lift, item_at
from retarget import load_config
from teleop.control.session import Session
from teleop.tasks import TaskRuntime, build_task, load_spec

CUBE_SPEC = Path(__file__).parent / "data" / "pick_up_test_cube.yaml"
CUBE_APPROACH = dict(pitch=0.6, reach=0.10, height=0.11, half_height=0.025)


def cube_runtime(task_id: str = "pick_up_test_cube", horizon: int | None = None) -> TaskRuntime:
    """Runtime factory for the test task (picklable: a module-level function)."""
    assert task_id == "pick_up_test_cube", task_id
    return TaskRuntime(build_task(load_spec(CUBE_SPEC)), horizon=horizon)


def scripted_step(session: Session):
    """``step(action)`` for the scripted motions: the session holds ``action`` for one tick
    (stepping, scoring and recording as every tick does)."""
    def step(action):
        session.hold(action)
        return session.tick()
    return step


def record_cube_take(store, hold: float = 1.0):
    rt = cube_runtime()
    session = Session(rt, load_config().build(rt.sim.scene))
    session.reset(0, 0)
    session.start_recording(store, operator="tester", device="scripted")
    grasp_and_lift(rt.sim, item_at(rt.sim, "cube", CUBE_APPROACH), side="right", hold=hold,
                   step=scripted_step(session))
    return session.stop_recording(), rt.result()
