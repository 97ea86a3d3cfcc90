"""Retargeting configuration: frozen dataclasses loaded from YAML and validated on construction.

Names may contain ``{side}`` (``left`` / ``right``), so one file describes both sides of an
embodiment. Nothing here knows a particular robot: embodiments differ only by their YAML file.
"""
from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from retarget.filters import FilterConfig
from retarget.kin import PointSpec
from retarget.separation import SeparationConfig
from retarget.nodes import N_NODES, NODE_NAMES, SIDES
from teleop.core.errors import ConfigError, choices
from teleop.core.yamlio import load_yaml

CONFIG_DIR = Path(__file__).parent / "configs"


def _positive(obj, names, where):
    for name in names:
        value = getattr(obj, name)
        if not (isinstance(value, (int, float)) and np.isfinite(value) and value >= 0):
            raise ConfigError(f"{where}: {name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class HandConfig:
    """One embodiment's hand: its joints, its 21 keypoints (node order) and the solver weights."""

    joints: tuple[str, ...]
    keypoints: tuple[dict, ...]                 # 21 x {site: name} or {body: name, offset: [x, y, z]}
    root_body: str                              # the palm frame keypoints are expressed in
    model: str = "scene"                        # "scene", a path, or "pkg:<package>/<path in it>"
    handedness: str | None = None               # fixed chirality (a one-sided hand), else the side
    fixed: dict = field(default_factory=dict)   # other joints held at a value (e.g. a wrist)
    couplings: tuple[dict, ...] = ()            # {joint, leader, ratio, offset}: q = ratio*q_lead + offset
    rest: dict = field(default_factory=dict)    # joint (without side prefix) -> rest value
    keypoint_weights: dict = field(default_factory=lambda: {"default": 1.0})
    pinch_weight: float = 10.0
    pinch_distance: float = 0.02                # m: pinch weight halves at this thumb-finger gap
    bone_weight: float = 0.0                    # bone-direction terms (0: positions only, the old cost)
    contact_distance: tuple = (0.01, 0.04)      # m: thumb-fingertip gap where positions fully / no longer
                                                # take over from bone directions (robot scale)
    curl_contact: tuple = (0.0, 0.0)            # digit curl (1 - base-to-tip / digit length) where positions
                                                # start / fully take over: a grasp ((0, 0): off)
    temporal_weight: float = 1e-5               # per rad^2, against 1 m^2 of weighted keypoint error
    rest_weight: float = 1e-7
    damping: float = 1e-7                       # Levenberg-Marquardt floor
    iterations: int = 6
    tolerance: float = 1e-4                     # rad: stop when the largest step is below
    where: str = "hand"

    def __post_init__(self):
        w = self.where
        if len(self.keypoints) != N_NODES:
            raise ConfigError(f"{w}.keypoints: need {N_NODES} entries in node order {list(NODE_NAMES)}, "
                              f"got {len(self.keypoints)}")
        if not self.joints:
            raise ConfigError(f"{w}.joints: empty")
        if self.handedness not in (None, *SIDES):
            raise ConfigError(f"{w}.handedness: must be {choices(SIDES)} or absent, got {self.handedness!r}")
        _positive(self, ("pinch_weight", "temporal_weight", "rest_weight", "damping", "tolerance"), w)
        if self.pinch_distance <= 0 or int(self.iterations) < 1:
            raise ConfigError(f"{w}: pinch_distance must be > 0 and iterations >= 1")
        _positive(self, ("bone_weight",), w)
        cd = self.contact_distance
        if len(cd) != 2 or not (0 <= float(cd[0]) < float(cd[1])):
            raise ConfigError(f"{w}.contact_distance: need [near, far] with 0 <= near < far, got {cd!r}")
        cc = self.curl_contact
        if len(cc) != 2 or not (0 <= float(cc[0]) <= float(cc[1]) <= 1):
            raise ConfigError(f"{w}.curl_contact: need [start, full] with 0 <= start <= full <= 1, got {cc!r}")
        self.keypoint_weight_vector()

    def joint_names(self, side: str) -> tuple[str, ...]:
        return tuple(j.format(side=side) for j in self.joints)

    def chirality(self, side: str) -> str:
        return self.handedness or side

    def point_specs(self, side: str) -> list[PointSpec]:
        out = []
        for i, kp in enumerate(self.keypoints):
            unknown = set(kp) - {"site", "body", "offset"}
            if unknown:
                raise ConfigError(f"{self.where}.keypoints[{i}]: unknown field {sorted(unknown)[0]!r}; "
                                  f"valid: {choices(['site', 'body', 'offset'])}")
            fmt = lambda v: v.format(side=side) if isinstance(v, str) else v  # noqa: E731
            out.append(PointSpec(site=fmt(kp.get("site")), body=fmt(kp.get("body")),
                                 offset=tuple(kp.get("offset", (0.0, 0.0, 0.0)))))
        return out

    def keypoint_weight_vector(self) -> np.ndarray:
        """(21,) weights: an exact node name wins over its kind (``tip``, ``mcp``…), then ``default``."""
        kinds = {n.rsplit("_", 1)[-1] for n in NODE_NAMES}
        valid = {"default", *NODE_NAMES, *kinds}
        for key, value in self.keypoint_weights.items():
            if key not in valid:
                raise ConfigError(f"{self.where}.keypoint_weights: unknown key {key!r}; "
                                  f"valid: {choices(sorted(valid))}")
            if not (isinstance(value, (int, float)) and value >= 0):
                raise ConfigError(f"{self.where}.keypoint_weights.{key}: must be a number >= 0")
        kw = self.keypoint_weights
        return np.array([kw.get(n, kw.get(n.rsplit("_", 1)[-1], kw.get("default", 1.0))) for n in NODE_NAMES], float)

    def load_model(self, scene_model: mujoco.MjModel | None = None) -> mujoco.MjModel:
        if self.model == "scene":
            if scene_model is None:
                raise ConfigError(f"{self.where}.model is 'scene' but no scene was given")
            return scene_model
        path = _resolve_model_path(self.model, self.where)
        try:
            return mujoco.MjModel.from_xml_path(str(path))
        except ValueError as exc:
            raise ConfigError(f"{self.where}.model: {path} does not compile: {exc}") from exc


def _resolve_model_path(spec: str, where: str) -> Path:
    if spec.startswith("pkg:"):
        package, _, rel = spec[4:].partition("/")
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise ConfigError(f"{where}.model: package {package!r} is not installed (pip install it)")
        path = Path(list(found.submodule_search_locations)[0]) / rel
    else:
        path = Path(spec)
    if not path.exists():
        raise ConfigError(f"{where}.model: no such file {path}")
    return path


@dataclass(frozen=True)
class ArmConfig:
    """One embodiment's arm: joints (SLSQP over all; the last two, the wrist, predicted in closed form)."""

    joints: tuple[str, ...]
    ee_site: str                       # its frame must be the palm frame of the hand config
    shoulder_body: str                 # the Procrustes anchor (origin of this body)
    arm_length: float                  # robot shoulder -> wrist reach used for scaling (m)
    n_solved: int = 5
    position_weight: float = 1.0       # per m^2
    orientation_weight: float = 0.02   # per unit of 0.5 |R - R*|_F^2
    smoothness_weight: float = 1e-3    # per rad^2 of change from the last tick
    posture_weight: float = 0.0        # per rad^2 away from the rest (ready) posture: picks the elbow
    limit_weight: float = 0.0          # per rad^2 inside limit_margin of a joint limit
    limit_margin: float = 0.1          # rad
    max_step: float = 0.25             # rad: trust region, no joint moves more in one tick
    max_step_near: float = 0.06        # rad: the trust region while separation constraints are active
    null_step: float = 0.0             # rad per tick of self-motion away from the joint limits
    max_iter: int = 15
    ftol: float = 1e-9
    escape_error_mm: float = 8.0       # position error that starts the search for a better configuration
    escape_starts_per_tick: int = 1
    escape_max_iter: int = 20
    escape_max_move: float = 1.2       # rad: only configurations this near (every joint) are moved to
    search_starts: int = 10            # starts of the configuration search after a jump (0: none)
    jump_mm: float = 150.0             # a target moved this far (or jump_deg) in a tick, and as far from the arm
    jump_deg: float = 60.0
    where: str = "arm"

    def __post_init__(self):
        if len(self.joints) != self.n_solved + 2:
            raise ConfigError(f"{self.where}: need n_solved + 2 joints (the last two in closed form), "
                              f"got {len(self.joints)} joints and n_solved={self.n_solved}")
        _positive(self, ("position_weight", "orientation_weight", "smoothness_weight", "ftol", "posture_weight",
                         "limit_weight", "limit_margin", "escape_error_mm", "escape_max_move", "null_step", "jump_mm",
                         "max_step_near",
                         "jump_deg"), self.where)
        if self.arm_length <= 0 or self.max_iter < 1 or self.escape_max_iter < 1 or not self.max_step > 0 \
                or self.escape_starts_per_tick < 0 or self.search_starts < 0:
            raise ConfigError(f"{self.where}: arm_length > 0, max_step > 0, max_iter >= 1, escape_max_iter >= 1 "
                              "and escape_starts_per_tick >= 0 required")

    def joint_names(self, side: str) -> tuple[str, ...]:
        return tuple(j.format(side=side) for j in self.joints)


@dataclass(frozen=True)
class RetargetConfig:
    """The whole bimanual retargeter. ``build(scene)`` returns a :class:`BimanualRetargeter`."""

    arm: ArmConfig
    hand: HandConfig
    name: str = "default"
    operator_rotation: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))  # operator -> robot world
    workspace_offset: tuple = (0.0, 0.0, 0.0)       # added to every scaled wrist target (m)
    residual_warn_mm: float = 20.0                 # median hand residual above this -> "degraded"
    hand_filter: FilterConfig = FilterConfig()     # One-Euro on the hand keypoints (palm frame); off by default
    wrist_filter: FilterConfig = FilterConfig()    # One-Euro on the wrist target position
    rotation_filter: FilterConfig = FilterConfig() # One-Euro on the palm rotation target
    filter_radius: float = 0.1                     # m per rad: rotation speed as a linear speed for beta
    separation: SeparationConfig = SeparationConfig()   # keep the two arms apart (default: off)
    source: str = "<memory>"

    def __post_init__(self):
        rot = np.asarray(self.operator_rotation, float)
        if rot.shape != (3, 3) or not np.allclose(rot @ rot.T, np.eye(3), atol=1e-6) or np.linalg.det(rot) < 0:
            raise ConfigError(f"{self.source}: operator_rotation must be a 3x3 rotation matrix")
        if np.asarray(self.workspace_offset).shape != (3,):
            raise ConfigError(f"{self.source}: workspace_offset must be 3 numbers")
        if not self.residual_warn_mm > 0:
            raise ConfigError(f"{self.source}: residual_warn_mm must be > 0")
        if not self.filter_radius > 0:
            raise ConfigError(f"{self.source}: filter_radius must be > 0")

    def build(self, scene, profile=None):
        from retarget.bimanual import BimanualRetargeter
        return BimanualRetargeter(scene, self, profile)


def _make(cls, raw, at: str, **extra):
    if not isinstance(raw, dict):
        raise ConfigError(f"{at}: expected a mapping, got {type(raw).__name__}")
    valid = [f.name for f in dataclasses.fields(cls) if f.name not in ("where", "source")]
    unknown = [k for k in raw if k not in valid]
    if unknown:
        raise ConfigError(f"{at}: unknown field {unknown[0]!r}; valid: {choices(valid)}")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    try:
        return cls(**kwargs, **extra)
    except TypeError as exc:
        raise ConfigError(f"{at}: {exc}") from exc


def _read(path) -> dict:
    return load_yaml(path, "retarget config")


def load_hand_config(path: str | Path) -> HandConfig:
    """A hand-only config file (e.g. a second embodiment's hand)."""
    return _make(HandConfig, _read(path), str(path), where=str(path))


def load_config(path: str | Path = CONFIG_DIR / "bidex.yaml") -> RetargetConfig:
    raw = _read(path)
    if not isinstance(raw, dict) or "arm" not in raw or "hand" not in raw:
        raise ConfigError(f"{path}: a retarget config needs 'arm' and 'hand' sections")
    raw = dict(raw)
    arm = _make(ArmConfig, raw.pop("arm"), f"{path}: arm", where=f"{path}: arm")
    hand = _make(HandConfig, raw.pop("hand"), f"{path}: hand", where=f"{path}: hand")
    filters = {k: _make(FilterConfig, raw.pop(k), f"{path}: {k}", where=f"{path}: {k}")
               for k in ("hand_filter", "wrist_filter", "rotation_filter") if k in raw}
    if "separation" in raw:
        filters["separation"] = _make(SeparationConfig, raw.pop("separation"), f"{path}: separation",
                                      where=f"{path}: separation")
    return _make(RetargetConfig, raw, str(path), arm=arm, hand=hand, source=str(path), **filters)
