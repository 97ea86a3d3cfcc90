"""Task engine: declarative specs, object library, predicate catalog, latching scorer, resets.

Public API::

    from teleop.tasks import TaskRuntime, build_task, get_spec, all_specs
    rt = TaskRuntime("pick_up_peach")      # or TaskRuntime(build_task(spec))
    obs = rt.reset(seed_index, episode_index); state0 = rt.initial_state
    obs = rt.step(action58); rt.last -> TickScore; rt.result() -> EpisodeResult
"""
from teleop.tasks.build import TaskScene, build_task, placement_seed
from teleop.tasks.loader import all_specs, get_spec, load_spec, parse_spec, spec_paths
from teleop.tasks.predicates import PREDICATES
from teleop.tasks.runtime import TaskRuntime
from teleop.tasks.scorer import EpisodeResult, Scorer, SubtaskResult, TickScore, horizon_steps
from teleop.tasks.spec import TaskSpec

__all__ = ["TaskScene", "build_task", "placement_seed", "all_specs", "get_spec", "load_spec", "parse_spec",
           "spec_paths", "PREDICATES", "TaskRuntime", "EpisodeResult", "Scorer", "SubtaskResult", "TickScore",
           "horizon_steps", "TaskSpec"]
