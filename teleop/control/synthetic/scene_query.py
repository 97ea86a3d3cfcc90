"""What the planner needs to know about the scene after a reset: where things are and how big."""
from __future__ import annotations

import mujoco
import numpy as np

from teleop.core.errors import ConfigError, choices

_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


class SceneQuery:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData):
        self.model, self.data = model, data
        self.bodies = {model.body(i).name: i for i in range(model.nbody)}

    def body_id(self, name: str) -> int:
        if name not in self.bodies:
            objects = [n for n in self.bodies if not n.startswith(("left_", "right_", "world", "table"))]
            raise ConfigError(f"no body {name!r} in the scene; objects are {choices(objects)}")
        return self.bodies[name]

    def position(self, name: str) -> np.ndarray:
        return self.data.xpos[self.body_id(name)].copy()

    def site(self, name: str) -> np.ndarray:
        return self.data.site(name).xpos.copy()

    def geom_id(self, name: str) -> int:
        try:
            return int(self.model.geom(name).id)
        except KeyError:
            raise ConfigError(f"no geom {name!r} in the scene") from None

    def geom(self, name: str) -> np.ndarray:
        """World position (3,) of a named geom (e.g. a handle)."""
        return self.data.geom_xpos[self.geom_id(name)].copy()

    def geom_extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World axis-aligned bounds (lo (3,), hi (3,)) of one named geom (e.g. a part to grasp)."""
        return self._geom_box(self.geom_id(name))

    def _geom_box(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        pts = self._geom_corners(g)
        return pts.min(axis=0), pts.max(axis=0)

    def _geom_corners(self, g: int) -> np.ndarray:
        """World positions (8, 3) of the corners of geom ``g``'s local bounding box."""
        m, d = self.model, self.data
        local = m.geom_aabb[g, :3] + _CORNERS * m.geom_aabb[g, 3:]
        return d.geom_xpos[g] + local @ d.geom_xmat[g].reshape(3, 3).T

    def up_axis(self, name: str) -> np.ndarray:
        """The body's local z axis in the world (3,): a cylinder's own axis, up when it stands."""
        return self.data.xmat[self.body_id(name)].reshape(3, 3)[:, 2].copy()

    def yaw(self, name: str) -> float:
        """Heading (rad) of the body's local x axis in the table plane."""
        x = self.data.xmat[self.body_id(name)].reshape(3, 3)[:, 0]
        return float(np.arctan2(x[1], x[0]))

    def hinge(self, joint: str) -> tuple[np.ndarray, np.ndarray]:
        """World anchor (3,) and unit axis (3,) of a named hinge joint."""
        try:
            j = self.data.joint(joint)
        except KeyError:
            raise ConfigError(f"no joint {joint!r} in the scene") from None
        return j.xanchor.copy(), j.xaxis.copy()

    def part_hinge(self, geom: str) -> str:
        """The hinge joint that moves a named geom: the nearest one on its body or the bodies above."""
        m = self.model
        b = int(m.geom_bodyid[self.geom_id(geom)])
        while b != 0:
            for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
                if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
                    return m.joint(j).name
            b = int(m.body_parentid[b])
        raise ConfigError(f"geom {geom!r} is on no hinged body")

    def extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World axis-aligned bounds (lo (3,), hi (3,)) of every collision geom of ``name`` and its
        child bodies."""
        boxes = [self._geom_box(g) for g in self._collision_geoms(self.body_id(name))]
        if not boxes:
            p = self.position(name)
            return p, p
        return np.min([lo for lo, _ in boxes], axis=0), np.max([hi for _, hi in boxes], axis=0)

    def own_size(self, name: str) -> np.ndarray:
        """Size (3,) of ``name``'s collision geoms along its own heading (x: its local x turned into
        the table plane, z: up): a 16 x 2 cm spoon lying turned 30 degrees is still 2 cm wide, where
        the narrow side of its world bounds is 10 cm."""
        geoms = self._collision_geoms(self.body_id(name))
        if not geoms:
            return np.zeros(3)
        yaw = self.yaw(name)
        c, s = np.cos(yaw), np.sin(yaw)
        unturn = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])     # world -> heading frame
        pts = np.concatenate([self._geom_corners(g) for g in geoms]) @ unturn.T
        return pts.max(axis=0) - pts.min(axis=0)

    def _collision_geoms(self, root: int) -> list[int]:
        """The geoms of body ``root`` and its children that collide."""
        m = self.model
        out = []
        for g in range(m.ngeom):
            b = m.geom_bodyid[g]
            while b != 0 and b != root:
                b = m.body_parentid[b]
            if b == root and not (m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0):
                out.append(g)
        return out

    def lowest_point(self, name: str) -> np.ndarray:
        """World point (3,) at ``name``'s low end as it hangs now: the centre of the lowest four
        corners of the local bounding box of its lowest collision geom (a rod held tilted: the centre
        of its lower end face, on its axis; lying flat: under its centre)."""
        geoms = self._collision_geoms(self.body_id(name))
        if not geoms:
            return self.position(name)
        corners = min((self._geom_corners(g) for g in geoms), key=lambda pts: pts[:, 2].min())
        return corners[np.argsort(corners[:, 2])[:4]].mean(axis=0)

    def top(self, name: str) -> float:
        return float(self.extent(name)[1][2])

    def centre(self, name: str) -> np.ndarray:
        lo, hi = self.extent(name)
        return (lo + hi) / 2
