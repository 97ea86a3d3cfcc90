"""Robot parameter file (YAML) loaded into frozen dataclasses and checked on load."""
from __future__ import annotations

import dataclasses
from dataclasses import MISSING, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from teleop.core.conventions import SIDES
from teleop.core.errors import ConfigError, choices
from teleop.core.yamlio import load_yaml

DEFAULT_PARAMS = Path(__file__).with_name("robot.yaml")
INTEGRATORS = ("euler", "implicit", "implicitfast", "rk4")
CONES = ("pyramidal", "elliptic")


@dataclass(frozen=True)
class PhysicsParams:
    timestep: float
    control_hz: float
    integrator: str
    cone: str
    impratio: float

    def __post_init__(self):
        if self.integrator not in INTEGRATORS:
            raise ConfigError(f"physics.integrator: {self.integrator!r} is not one of {choices(INTEGRATORS)}")
        if self.cone not in CONES:
            raise ConfigError(f"physics.cone: {self.cone!r} is not one of {choices(CONES)}")
        substeps = 1.0 / (self.control_hz * self.timestep)
        if self.timestep <= 0 or abs(substeps - round(substeps)) > 1e-9:
            raise ConfigError("physics: 1/(control_hz*timestep) must be a whole number of substeps")

    @property
    def substeps(self) -> int:
        return int(round(1.0 / (self.control_hz * self.timestep)))


@dataclass(frozen=True)
class ArmLink:
    pos: tuple[float, float, float]
    rot_x_deg: float
    range: tuple[float, float]
    torque: float
    mass: float
    kp: float
    armature: float


@dataclass(frozen=True)
class ArmParams:
    links: tuple[ArmLink, ...]
    flange: tuple[float, float, float]
    kv_ratio: float
    joint_damping: float
    link_radius: float
    joint_radius: float
    rgba: tuple[float, ...]
    home: tuple[float, ...]

    def __post_init__(self):
        if len(self.home) != len(self.links):
            raise ConfigError(f"arm.home: {len(self.home)} values for {len(self.links)} links")
        for i, (q, link) in enumerate(zip(self.home, self.links)):
            if not link.range[0] <= q <= link.range[1]:
                raise ConfigError(f"arm.home[{i}] = {q} is outside the joint range {link.range}")


@dataclass(frozen=True)
class ArchParams:
    range: tuple[float, float]
    axis: tuple[float, float, float]
    mcp_offset: tuple[float, float, float]


@dataclass(frozen=True)
class FingerParams:
    name: str
    base: tuple[float, float, float]
    arch: ArchParams | None = None


@dataclass(frozen=True)
class ThumbParams:
    base: tuple[float, float, float]
    tilt_deg: float
    segments: tuple[float, float, float]
    ranges: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class HandParams:
    palm: dict[str, Any]
    link_radius: float
    tip_radius: float
    segment_mass: tuple[float, float, float]
    kp: float
    kv: float
    armature: float
    joint_damping: float
    force_limit: float
    friction: tuple[float, float, float]
    rgba: tuple[float, ...]
    tip_rgba: tuple[float, ...]
    fingers: tuple[FingerParams, ...]
    finger_segments: tuple[float, float, float]
    finger_ranges: dict[str, tuple[float, float]]
    thumb: ThumbParams
    condim: int = 4                                  # contact dimensionality of every hand geom
    solref: tuple[float, float] = (0.02, 1.0)        # MuJoCo defaults unless robot.yaml says otherwise
    solimp: tuple[float, ...] = (0.9, 0.95, 0.001, 0.5, 2.0)


@dataclass(frozen=True)
class TableParams:
    center: tuple[float, float]
    half_size: tuple[float, float]
    top_z: float
    thickness: float
    friction: tuple[float, float, float]


@dataclass(frozen=True)
class RobotParams:
    physics: PhysicsParams
    arm: ArmParams
    mounts: dict[str, dict[str, Any]]
    hand: HandParams
    table: TableParams
    cameras: dict[str, dict[str, Any]]
    ready: dict[str, Any]
    source: str = "<memory>"


def _build(cls, raw: Any, where: str, nested: dict[str, Any] | None = None):
    """Instantiate dataclass ``cls`` from a mapping, naming the offending field on error."""
    label = where or "top level"
    if not isinstance(raw, dict):
        raise ConfigError(f"{label}: expected a mapping, got {type(raw).__name__}")
    names = [f.name for f in fields(cls) if f.name != "source"]
    required = [f.name for f in fields(cls)
                if f.default is MISSING and f.default_factory is MISSING and f.name != "source"]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ConfigError(f"{label}: unknown field {unknown[0]!r}; valid fields are {choices(names)}")
    missing = [n for n in required if n not in raw]
    if missing:
        raise ConfigError(f"{label}: missing field {missing[0]!r}")
    kwargs = {}
    for name, value in raw.items():
        conv = (nested or {}).get(name)
        if conv is not None:
            value = conv(value, f"{where}.{name}" if where else name)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"{label}: {exc}") from exc


def _ranges(raw, where):
    return {k: tuple(v) for k, v in raw.items()}


def _finger(raw, where):
    arch = lambda r, w: _build(ArchParams, r, w) if r is not None else None  # noqa: E731
    return _build(FingerParams, raw, where, {"arch": arch})


def parse_params(raw: dict, source: str = "<memory>") -> RobotParams:
    """Check and convert a parsed YAML mapping into :class:`RobotParams`."""
    arm = lambda r, w: _build(  # noqa: E731
        ArmParams, r, w,
        {"links": lambda ls, w2: tuple(_build(ArmLink, link, f"{w2}[{i}]") for i, link in enumerate(ls))})
    hand = lambda r, w: _build(HandParams, r, w, {  # noqa: E731
        "fingers": lambda fs, w2: tuple(_finger(f, f"{w2}[{i}]") for i, f in enumerate(fs)),
        "finger_ranges": _ranges,
        "palm": lambda p, w2: dict(p),
        "thumb": lambda t, w2: _build(ThumbParams, t, w2, {"ranges": _ranges}),
    })
    top = {
        "physics": lambda r, w: _build(PhysicsParams, r, w),
        "arm": arm,
        "hand": hand,
        "table": lambda r, w: _build(TableParams, r, w),
        "mounts": lambda r, w: dict(r),
        "cameras": lambda r, w: dict(r),
        "ready": lambda r, w: dict(r),
    }
    try:
        params = _build(RobotParams, raw, "", top)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    if set(params.mounts) != set(SIDES):
        raise ConfigError(f"{source}: mounts must name exactly {' and '.join(map(repr, SIDES))}")
    return dataclasses.replace(params, source=source)


def load_params(path: str | Path = DEFAULT_PARAMS) -> RobotParams:
    """Load and check a robot parameter file."""
    return parse_params(load_yaml(path, "robot parameters"), str(path))


@lru_cache(maxsize=1)
def default_params() -> RobotParams:
    """The shipped robot.yaml, read once: the rates and sizes of code that is not handed a scene."""
    return load_params(DEFAULT_PARAMS)


def default_control_hz() -> float:
    """The control rate of the shipped robot (``physics.control_hz`` of robot.yaml)."""
    return default_params().physics.control_hz
