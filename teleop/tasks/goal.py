"""Drive a task scene into its goal state by setting poses and joints directly (no physics).

Used by the generic task tests and for demos of a spec: ``drive_to_goal(rt)`` realises every
subtask's predicates in declared order, committing one scored tick after each subtask (and inside
predicates that need a history, e.g. presses or insertion order). Free objects are teleported;
hands reach fixtures by a small damped-least-squares IK on the arm joints.
"""
from __future__ import annotations

import mujoco
import numpy as np

from teleop.tasks.predicates import in_interior
from teleop.tasks.runtime import TaskRuntime
from teleop.tasks.world import TABLE_TOP


class Goal:
    def __init__(self, rt: TaskRuntime):
        self.rt, self.w = rt, rt.world
        self.model, self.data = rt.sim.model, rt.sim.data
        self.start = {n: self.w.pos(self.data, n).copy() for n, o in self.w.objects.items() if o.qadr is not None}

    # -- ticking -------------------------------------------------------------------------------
    def commit(self):
        mujoco.mj_forward(self.model, self.data)
        self.rt.sim.tick += 1
        return self.rt.after_step()

    # -- free objects --------------------------------------------------------------------------
    def move(self, name: str, pos, carry: bool = True) -> None:
        """Teleport ``name``; objects inside it (containers) move along."""
        o = self.w.objects[name]
        old = self.data.xpos[o.body].copy()
        riders = [n for n, r in self.w.objects.items() if carry and n != name and r.qadr is not None
                  and o.shape.interior is not None and in_interior(self.w, self.data, n, name, 0.01)]
        self.data.qpos[o.qadr:o.qadr + 3] = pos
        self.data.qvel[o.vadr:o.vadr + 6] = 0
        for n in riders:
            r = self.w.objects[n]
            self.data.qpos[r.qadr:r.qadr + 3] += np.asarray(pos) - old
        mujoco.mj_kinematics(self.model, self.data)

    def lift(self, name: str, dz: float) -> None:
        p = self.w.pos(self.data, name).copy()
        self.move(name, (p[0], p[1], p[2] + dz))

    def put_inside(self, name: str, container: str) -> None:
        c = self.w.objects[container]
        inter = c.shape.interior
        mat = self.data.xmat[c.interior_body].reshape(3, 3)
        floor = self.data.xpos[c.interior_body] + mat @ np.asarray(inter.floor)
        bottom = self.w.objects[name].shape.bottom
        # standing on the floor when its centre stays 1 cm below the rim, else sunk to mid-depth (as before)
        height = bottom if bottom + 0.002 <= 2 * inter.half[2] - 0.01 else min(bottom, inter.half[2])
        base = floor + mat @ np.array([0, 0, height + 0.002])
        self.move(name, self.free_spot(name, container, base, mat, inter.half[0], inter.half[1]))

    def put_on(self, name: str, support: str) -> None:
        s = self.w.objects[support]
        q = self.data.xpos[s.body]
        top = s.shape.interior.floor[2] if s.shape.interior is not None and s.shape.top_half == (0, 0) else s.shape.top
        base = np.array([q[0], q[1], q[2] + top + self.w.objects[name].shape.bottom + 0.002])
        hx, hy = s.shape.top_half
        self.move(name, self.free_spot(name, support, base, self.data.xmat[s.body].reshape(3, 3), hx, hy))

    def free_spot(self, name: str, support: str, centre: np.ndarray, mat: np.ndarray, hx: float,
                  hy: float) -> np.ndarray:
        """``centre`` (a support's or container's middle, where ``name`` would stand) unless another
        free object (not the ``support`` itself) already stands there at that level; then the spot of
        a grid over the half extents ``hx``, ``hy`` (support frame ``mat``) nearest the centre that fits
        inside them and overlaps nothing; failing that, a single occupant moves aside and the two stand
        side by side along the longer axis; else ``centre``."""
        me = self.w.objects[name]
        bottom = centre[2] - me.shape.bottom
        riders = {n for n, r in self.w.objects.items() if r.qadr is not None and me.shape.interior is not None
                  and n != name and in_interior(self.w, self.data, n, name, 0.01)}
        others = [(self.w.pos(self.data, n)[:2].copy(), r.shape.radius) for n, r in self.w.objects.items()
                  if r.qadr is not None and n not in (name, support) and n not in riders
                  and abs(self.w.bottom_z(self.data, n) - bottom) < 0.006
                  and np.all(np.abs((mat.T @ (self.w.pos(self.data, n) - centre))[:2]) <= (hx + 0.02, hy + 0.02))]
        if not others or hx <= 0 or hy <= 0:
            return centre
        grid = [(fx, fy) for fx in (0, -0.5, 0.5, -0.8, 0.8) for fy in (0, -0.5, 0.5, -0.8, 0.8)
                if fx * fx + fy * fy <= 0.65]                   # inside a round interior as well
        offsets = [(fx * hx, fy * hy) for fx, fy in sorted(grid, key=lambda g: g[0] ** 2 + g[1] ** 2)]
        mine = min(me.shape.radius, 0.05)
        for dx, dy in offsets:
            if abs(dx) + mine > hx or abs(dy) + mine > hy:           # would poke through a wall / off the edge
                continue
            spot = centre + mat @ np.array([dx, dy, 0.0])
            if all(np.hypot(*(spot[:2] - xy)) >= mine + min(r, 0.05) + 0.003 for xy, r in others):
                return spot
        if len(others) == 1:         # one occupant in the middle: both side by side along the longer axis
            gap = (mine + min(others[0][1], 0.05) + 0.003) / 2
            axis = np.array([gap, 0.0, 0.0]) if hx >= hy else np.array([0.0, gap, 0.0])
            occupant = next(n for n, r in self.w.objects.items() if r.qadr is not None and n not in (name, support)
                            and n not in riders and np.allclose(self.w.pos(self.data, n)[:2], others[0][0]))
            p = self.w.pos(self.data, occupant).copy()
            self.move(occupant, p - mat @ axis)
            return self.w.pos(self.data, occupant) + mat @ (2 * axis) + np.array([0, 0, centre[2] - p[2]])
        return centre

    def put_on_table(self, name: str, xy=None) -> None:
        """At ``xy``, else where it started if that was on the table, else a free spot in front."""
        on_table = self.w.spec.object(name).spawn.on == "table"
        p = xy if xy is not None else self.start[name] if on_table else (0.42, 0.0)
        self.move(name, (p[0], p[1], TABLE_TOP + self.w.objects[name].shape.bottom + 0.002))

    def set_tilt(self, name: str, angle: float) -> None:
        o = self.w.objects[name]
        self.data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(angle / 2), np.sin(angle / 2), 0, 0]
        mujoco.mj_kinematics(self.model, self.data)

    def lowest_z(self, name: str) -> float:
        """World height of the object's lowest point (its geoms' bounding boxes, as posed now)."""
        mujoco.mj_kinematics(self.model, self.data)
        low = np.inf
        for g in self.w.objects[name].geoms:
            if self.model.geom_contype[g] == 0 and self.model.geom_conaffinity[g] == 0:
                continue
            mat = self.data.geom_xmat[g].reshape(3, 3)
            c, h = self.model.geom_aabb[g, :3], self.model.geom_aabb[g, 3:]
            low = min(low, self.data.geom_xpos[g][2] + mat[2] @ c - np.abs(mat[2]) @ h)
        return float(low)

    def stop(self, name: str) -> None:
        o = self.w.objects[name]
        self.data.qvel[o.vadr:o.vadr + 6] = 0

    def hand_point(self, side: str) -> np.ndarray:
        """Between the thumb, index and middle fingertips: an object there touches several hand geoms."""
        tips = self.rt.task.scene.layout.hands[side].fingertips
        mujoco.mj_kinematics(self.model, self.data)
        return np.mean([self.data.site_xpos[self.model.site(t).id] for t in tips[:3]], axis=0)

    def into_hand(self, name: str, side: str) -> None:
        """Between the fingertips if that touches 2+ hand geoms, else onto the index fingertip pad."""
        from teleop.tasks.predicates_state import hand_contacts
        from teleop.tasks.world import Frame
        self.move(name, self.hand_point(side))
        mujoco.mj_forward(self.model, self.data)
        if hand_contacts(self.w, Frame(self.w, self.data, 0), name, side) < 2:
            tip = self.rt.task.scene.layout.hands[side].fingertips[1]
            self.move(name, self.data.site_xpos[self.model.site(tip).id].copy())

    # -- contacts with the hand ----------------------------------------------------------------
    def touch(self, name: str, side: str) -> None:
        """One committed tick where the hand touches ``name``, then everything moved is put back."""
        o = self.w.objects[name]
        saved = self.data.qpos.copy()
        if o.qadr is not None:
            self.into_hand(name, side)
        else:
            self.reach(side, self._nearest_geom(name, side))
        self.commit()
        self.data.qpos[:] = saved
        mujoco.mj_forward(self.model, self.data)

    def _nearest_geom(self, name: str, side: str) -> np.ndarray:
        geoms = self.w.objects[name].geoms
        hp = self.hand_point(side)
        pts = self.data.geom_xpos[geoms]
        return pts[np.argmin(np.linalg.norm(pts - hp, axis=1))].copy()

    def reach(self, side: str, target: np.ndarray, iters: int = 80) -> None:
        """Damped least squares on the 7 arm joints so the index fingertip reaches ``target``."""
        layout = self.rt.task.scene.layout
        site = self.model.site(layout.hands[side].fingertips[1]).id
        jids = [self.model.joint(n).id for n in layout.arm_joints[side]]
        qadr = np.array([self.model.jnt_qposadr[j] for j in jids])
        dadr = np.array([self.model.jnt_dofadr[j] for j in jids])
        lo, hi = self.model.jnt_range[jids].T
        jac = np.zeros((3, self.model.nv))
        for _ in range(iters):
            mujoco.mj_kinematics(self.model, self.data)
            mujoco.mj_comPos(self.model, self.data)
            err = target - self.data.site_xpos[site]
            if np.linalg.norm(err) < 0.003:
                break
            mujoco.mj_jacSite(self.model, self.data, jac, None, site)
            J = jac[:, dadr]
            dq = J.T @ np.linalg.solve(J @ J.T + 1e-4 * np.eye(3), err)
            self.data.qpos[qadr] = np.clip(self.data.qpos[qadr] + dq, lo, hi)

    # -- fixtures ------------------------------------------------------------------------------
    def set_joint(self, name: str, fraction: float, carry: bool = False) -> None:
        """Set the main joint; with ``carry``, what lies in a volume that moves with it (a drawer's)
        moves along, as it would when a hand slides the drawer (the joint predicates' goals do)."""
        o = self.w.objects[name]
        lo, hi = o.joint_range
        moving = carry and o.shape.interior is not None and o.interior_body != o.body
        if moving:
            mujoco.mj_kinematics(self.model, self.data)
            riders = [n for n, r in self.w.objects.items() if r.qadr is not None and n != name
                      and in_interior(self.w, self.data, n, name, 0.01)]
            old = self.data.xpos[o.interior_body].copy()
        self.data.qpos[o.joint_qadr] = lo + fraction * (hi - lo)
        mujoco.mj_kinematics(self.model, self.data)
        if moving and riders:
            delta = self.data.xpos[o.interior_body] - old
            for n in riders:
                r = self.w.objects[n]
                self.data.qpos[r.qadr:r.qadr + 3] += delta
            mujoco.mj_kinematics(self.model, self.data)

    def press(self, button: str, n: int) -> None:
        self.w.events[f"{button}.presses"].realize(self, n)


def drive_to_goal(rt: TaskRuntime, upto: int | None = None):
    """Realise subtasks 0..upto-1 (all by default) in declared order; returns the last TickScore."""
    goal = Goal(rt)
    last = rt.last
    for preds in rt.scorer.preds[:upto]:
        for p in preds:
            p.realize(goal)
        last = goal.commit()
    return last
