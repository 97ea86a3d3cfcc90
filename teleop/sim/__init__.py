"""The simulator core: scene compilation (robot + task objects from one MjSpec) and :class:`Sim`."""
from teleop.sim.scene import Scene, build_scene
from teleop.sim.simulator import ACTION_DIM, HEADER, OBS_DIM, Sim, state_fingerprint

__all__ = ["ACTION_DIM", "HEADER", "OBS_DIM", "Scene", "Sim", "build_scene", "state_fingerprint"]
