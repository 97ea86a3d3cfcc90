"""Export one hand of an embodiment as a URDF (for third-party retargeters such as dex-retargeting).

Generated from the compiled MuJoCo model and the hand's retarget config, so it needs no robot-
specific code: the root link is the config's ``root_body`` (the palm frame every keypoint is
expressed in), each body below it becomes a link, each of its hinge joints a revolute joint with
the same axis, anchor and limits, and each of the 21 keypoints a fixed link named in the result.
MuJoCo applies a body's joints in order, each about an axis in the frame left by the previous one;
URDF needs one joint per link, so a body with several joints gets a chain of massless links.
Couplings become ``<mimic>`` tags; joints listed in ``fixed`` become fixed joints at their value.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from retarget.config import HandConfig
from retarget.kin import HINGE
from teleop.core.errors import ConfigError


@dataclass(frozen=True)
class HandURDF:
    path: Path
    joint_names: tuple[str, ...]       # the hand joints, config order (couplings included)
    free_joints: tuple[str, ...]       # those not driven by a <mimic> tag
    keypoint_links: tuple[str, ...]    # (21,) link name of each node, node order
    root_link: str


def _tf(pos=(0.0, 0.0, 0.0), rot=None) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = pos
    if rot is not None:
        T[:3, :3] = rot
    return T


def _quat_mat(q) -> np.ndarray:
    return Rotation.from_quat(np.asarray(q, float)[[1, 2, 3, 0]]).as_matrix()    # MuJoCo quats are w first


def _origin(el: ET.Element, T: np.ndarray) -> None:
    rpy = Rotation.from_matrix(T[:3, :3]).as_euler("xyz")    # extrinsic x-y-z = URDF roll-pitch-yaw
    ET.SubElement(el, "origin", xyz=" ".join(f"{v:.9g}" for v in T[:3, 3]), rpy=" ".join(f"{v:.9g}" for v in rpy))


class _Writer:
    def __init__(self, name: str):
        self.root = ET.Element("robot", name=name)

    def link(self, name: str) -> None:
        ET.SubElement(self.root, "link", name=name)

    def joint(self, name, kind, parent, child, T, axis=None, limits=None, mimic=None) -> None:
        el = ET.SubElement(self.root, "joint", name=name, type=kind)
        _origin(el, T)
        ET.SubElement(el, "parent", link=parent)
        ET.SubElement(el, "child", link=child)
        if axis is not None:
            ET.SubElement(el, "axis", xyz=" ".join(f"{v:.9g}" for v in axis))
        if limits is not None:
            ET.SubElement(el, "limit", lower=f"{limits[0]:.9g}", upper=f"{limits[1]:.9g}", effort="10", velocity="10")
        if mimic is not None:
            ET.SubElement(el, "mimic", joint=mimic[0], multiplier=f"{mimic[1]:.9g}", offset=f"{mimic[2]:.9g}")


def _mimics(cfg: HandConfig, side: str) -> dict:
    return {c["joint"].format(side=side): (c["leader"].format(side=side), float(c.get("ratio", 1.0)),
                                           float(c.get("offset", 0.0))) for c in cfg.couplings}


def _body_joints(w: _Writer, model, body: int, parent_link: str, ctx: dict) -> str:
    """Write ``body``'s joints as a chain from ``parent_link``; returns the link carrying the body frame."""
    name = model.body(body).name
    T = _tf(model.body_pos[body], _quat_mat(model.body_quat[body]))
    link, prev_anchor = parent_link, np.zeros(3)
    for j in range(model.body_jntadr[body], model.body_jntadr[body] + model.body_jntnum[body]):
        jname, anchor = model.joint(j).name, model.jnt_pos[j].copy()
        if int(model.jnt_type[j]) != HINGE:
            raise ConfigError(f"urdf export: joint {jname!r} is not a hinge")
        T = T @ _tf(anchor - prev_anchor)
        if jname in ctx["fixed"]:                  # a fixed joint at its value: fold it into the origin
            T = T @ _tf(rot=Rotation.from_rotvec(model.jnt_axis[j] * ctx["fixed"][jname]).as_matrix())
        elif jname in ctx["joints"]:
            child = f"{jname}__link"
            w.link(child)
            w.joint(jname, "revolute", link, child, T, model.jnt_axis[j], model.jnt_range[j], ctx["mimic"].get(jname))
            link, T = child, np.eye(4)
        else:
            raise ConfigError(f"urdf export: joint {jname!r} under the hand root is neither a hand joint nor fixed")
        prev_anchor = anchor
    w.link(name)
    w.joint(f"{name}__frame", "fixed", link, name, T @ _tf(-prev_anchor))
    return name


def hand_urdf(model: mujoco.MjModel, cfg: HandConfig, side: str, path: str | Path) -> HandURDF:
    """Write the URDF of ``side``'s hand (config ``cfg`` on ``model``) to ``path``."""
    root_name = cfg.root_body.format(side=side)
    root = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, root_name)
    if root < 0:
        raise ConfigError(f"urdf export: no body {root_name!r} in the model")
    joints = cfg.joint_names(side)
    ctx = dict(joints=set(joints), fixed={k.format(side=side): v for k, v in cfg.fixed.items()},
               mimic=_mimics(cfg, side))
    w = _Writer(f"{side}_hand")
    w.link(root_name)
    links = {root: root_name}
    for b in range(root + 1, model.nbody):        # MuJoCo numbers bodies depth first: parents come first
        if int(model.body_parentid[b]) in links:
            links[b] = _body_joints(w, model, b, links[int(model.body_parentid[b])], ctx)
    missing = [j for j in joints if model.joint(j).bodyid[0] not in links]
    if missing:
        raise ConfigError(f"urdf export: joints {missing[:3]} are not below {root_name!r}")
    kp_links = []
    for i, spec in enumerate(cfg.point_specs(side)):
        if spec.site is not None:
            sid = model.site(spec.site).id
            body, T = int(model.site_bodyid[sid]), _tf(model.site_pos[sid] + np.asarray(spec.offset))
        else:
            body, T = model.body(spec.body).id, _tf(spec.offset)
        if body not in links:
            raise ConfigError(f"urdf export: keypoint {i} is not on the hand below {root_name!r}")
        kp = f"{side}_kp{i:02d}_{str(spec.site or spec.body).replace(':', '_')}"
        w.link(kp)
        w.joint(f"{kp}__frame", "fixed", links[body], kp, T)
        kp_links.append(kp)
    path = Path(path)
    ET.indent(w.root)
    path.write_text(ET.tostring(w.root, encoding="unicode"))
    mimic = _mimics(cfg, side)
    return HandURDF(path, joints, tuple(j for j in joints if j not in mimic), tuple(kp_links), root_name)
