"""A stand-in for ``SceneQuery`` (teleop/control/synthetic/scene_query.py) in planner tests: every
answer comes from the dicts it was built with, so a test states the scene it plans in."""
from __future__ import annotations

import numpy as np


def _point(p) -> np.ndarray:
    return np.array(p, dtype=float)


def _corners(pair) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = pair
    return _point(lo), _point(hi)


class FakeScene:
    """``positions``: name -> (3,) centre; ``extents``: name -> ((3,) low, (3,) high) corners;
    ``yaws``: name -> heading (rad), ``yaw`` for every other name; ``geoms`` (a named geom's centre),
    ``sites`` and ``lowest`` (an object's lowest point): name -> (3,); ``sizes``: name -> (3,) own
    size (else its extent's); ``up_axes``: name -> (3,) local z in the world (else straight up).
    A name the test did not give raises KeyError: the planner asked for something the test did not expect it to."""

    def __init__(self, positions=None, extents=None, yaw=0.0, yaws=None, geoms=None, sites=None,
                 lowest=None, geom_extents=None, sizes=None, up_axes=None):
        self.positions = dict(positions or {})
        self.extents = dict(extents or {})
        self.default_yaw = float(yaw)
        self.yaws = dict(yaws or {})
        self.geoms = dict(geoms or {})
        self.sites = dict(sites or {})
        self.lowest = dict(lowest or {})
        self.geom_extents = dict(geom_extents or {})
        self.sizes = dict(sizes or {})
        self.up_axes = dict(up_axes or {})

    def position(self, name: str) -> np.ndarray:
        return _point(self.positions[name])

    def extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return _corners(self.extents[name])

    def own_size(self, name: str) -> np.ndarray:
        if name in self.sizes:
            return _point(self.sizes[name])
        lo, hi = self.extent(name)
        return hi - lo

    def up_axis(self, name: str) -> np.ndarray:
        axis = _point(self.up_axes.get(name, (0.0, 0.0, 1.0)))
        return axis / np.linalg.norm(axis)

    def yaw(self, name: str) -> float:
        return float(self.yaws.get(name, self.default_yaw))

    def geom(self, name: str) -> np.ndarray:
        return _point(self.geoms[name])

    def geom_extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return _corners(self.geom_extents[name])

    def site(self, name: str) -> np.ndarray:
        return _point(self.sites[name])

    def lowest_point(self, name: str) -> np.ndarray:
        return _point(self.lowest[name])


def box(centre, half) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) corners of a box around ``centre``: ``half`` a scalar or (3,) half-sizes."""
    c, h = _point(centre), np.broadcast_to(_point(half), (3,))
    return c - h, c + h
