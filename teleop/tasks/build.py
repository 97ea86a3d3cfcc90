"""Task scenes and runtimes: build a task's MjSpec objects, place them deterministically, step, score.

Typical use (control loop / recorder)::

    rt = TaskRuntime(build_task("pick_up_peach"))
    obs = rt.reset(seed_index=0, episode_index=3)     # rt.initial_state: serialised float64 state
    while not rt.done:
        obs = rt.step(action58)                       # physics + scene events + scoring
        text = rt.instruction                          # active language segment
    result = rt.result()                              # EpisodeResult (frozen)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.core.errors import ConfigError
from teleop.core.conventions import SIDES
from teleop.robot import RobotParams
from teleop.sim.scene import Scene, build_scene
from teleop.core.seeding import stable_seed
from teleop.tasks.events import build_events, n_userdata
from teleop.tasks.loader import get_spec
from teleop.tasks.objects import KINDS, Shape
from teleop.tasks.spec import TABLE, TaskSpec
from teleop.tasks.world import TABLE_TOP, TaskWorld

PARK_X = 1.3          # parked objects wait on the floor behind the table


@dataclass(frozen=True)
class TaskScene:
    spec: TaskSpec
    scene: Scene
    world: TaskWorld


def _yaw_quat(yaw: float) -> list[float]:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def _spec_hook(spec: TaskSpec, shapes: dict[str, Shape]):
    def hook(ms: mujoco.MjSpec) -> None:
        ms.nuserdata = n_userdata(spec)
        for i, o in enumerate(spec.objects):
            x, y = (PARK_X + 0.25 * i, 0.0) if o.parked else o.spawn.center
            body = ms.worldbody.add_body(name=o.name, pos=[x, y, TABLE_TOP], quat=_yaw_quat(o.spawn.yaw[0]))
            if not o.fixed:
                body.add_freejoint(name=f"{o.name}_free")
            shapes[o.name] = shape = KINDS[o.kind].build(body, o.name, o.params)
            base = 0.0 if o.parked else TABLE_TOP
            if o.fixed and o.spawn.on != TABLE:      # a fixture standing on another fixture (nails in a board)
                sup = spec.object(o.spawn.on)
                x, y = sup.spawn.center[0] + x, sup.spawn.center[1] + y
                # on the support's top: its origin stands ``bottom`` over the table (a box's is its
                # centre), its top ``top`` over that origin (the nails stood in the board's mid-plane)
                base += shapes[sup.name].bottom + shapes[sup.name].top
            body.pos = [x, y, base + shape.bottom + (0.0 if o.fixed else 0.002)]
    return hook


def build_task(task: str | TaskSpec, params: RobotParams | None = None) -> TaskScene:
    """Compile the robot plus the task's objects; ids are precomputed once in a :class:`TaskWorld`."""
    spec = get_spec(task) if isinstance(task, str) else task
    shapes: dict[str, Shape] = {}
    try:
        scene = build_scene(params, hooks=(_spec_hook(spec, shapes),))
    except ValueError as exc:        # MuJoCo refuses the scene (a name clash, a size the check let through)
        raise ConfigError(f"{spec.path or spec.id}: cannot build the scene: {exc}") from exc
    world = TaskWorld(spec, scene.model, shapes, {s: scene.layout.hands[s].palm_body for s in SIDES})
    events = build_events(world, spec)
    world.colour_events = [e for e in events if e.type in ("colour_swap", "colour_hide")]
    touched = {n for e in world.colour_events for n in (e.a.get("objects") or (e.a.get("object"),))}
    world.coloured = tuple(o.name for o in spec.objects if o.name in touched)
    return TaskScene(spec, scene, world)


def placement_seed(task_id: str, seed_index: int, episode_index: int) -> int:
    """Stable across machines and Python runs (SHA-256 of the parts)."""
    return stable_seed("placement", task_id, int(seed_index), int(episode_index))


def _support_top(world: TaskWorld, data, support: str) -> tuple[np.ndarray, float, float]:
    """(xy of the support, z of its surface, its yaw) for an object resting on it."""
    s = world.objects[support]
    if s.shape.interior is not None:         # its floor, in the frame of the body it moves with (a drawer)
        b = s.interior_body
        mat = data.xmat[b].reshape(3, 3)
        p = data.xpos[b] + mat @ np.asarray(s.shape.interior.floor)
        return p[:2].copy(), float(p[2]), math.atan2(mat[1, 0], mat[0, 0])
    p = data.xpos[s.body]
    mat = data.xmat[s.body].reshape(3, 3)
    return p[:2].copy(), float(p[2] + s.shape.top), math.atan2(mat[1, 0], mat[0, 0])


def place_objects(world: TaskWorld, model, data, rng: np.random.Generator, tries: int = 300) -> None:
    """Put every free object in its spawn region, resting on its support, without overlaps."""
    spec = world.spec
    # (support, xy, half extents): fixtures use their footprint, free objects a square around their radius
    placed: list[tuple[str, np.ndarray, tuple[float, float]]] = [
        (TABLE, np.array(o.spawn.center), world.objects[o.name].shape.half_xy())
        for o in spec.objects if o.fixed and o.spawn.on == TABLE]
    for o in spec.objects:
        ids = world.objects[o.name]
        if ids.joint_qadr is not None:
            lo, hi = ids.joint_range
            data.qpos[ids.joint_qadr] = lo + o.joint_init * (hi - lo)
        if o.fixed or o.parked:
            continue
        mujoco.mj_kinematics(model, data)          # supports placed earlier must have current poses
        sp = o.spawn
        if sp.on == TABLE:
            base_xy, base_z, base_yaw = np.zeros(2), TABLE_TOP, 0.0
        else:
            base_xy, base_z, base_yaw = _support_top(world, data, sp.on)
        radius = sp.clearance or ids.shape.radius
        c, s = math.cos(base_yaw), math.sin(base_yaw)
        for _ in range(tries):
            off = np.array(sp.center) + rng.uniform(-1, 1, 2) * np.array(sp.extent)
            xy = base_xy + np.array([c * off[0] - s * off[1], s * off[0] + c * off[1]])
            yaw = base_yaw + rng.uniform(*sp.yaw) if sp.yaw[0] != sp.yaw[1] else base_yaw + sp.yaw[0]
            if all(abs(xy[0] - q[0]) >= radius + h[0] + 0.005 or abs(xy[1] - q[1]) >= radius + h[1] + 0.005
                   for on, q, h in placed if on == sp.on):
                break
        else:
            raise ConfigError(f"{spec.path}: objects: cannot place {o.name!r} without overlap in {tries} tries; "
                              "enlarge its spawn extent")
        placed.append((sp.on, xy, (radius, radius)))
        world.place(data, o.name, (xy[0], xy[1], base_z + ids.shape.bottom + 0.002), yaw)
