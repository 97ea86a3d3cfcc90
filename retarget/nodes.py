"""The 21-node hand representation shared by every device, and the WebXR -> node linear map.

Node order (same as the robot's ``HandLayout.keypoints``): wrist; thumb cmc, mcp, ip, tip; then
index, middle, ring, little: mcp, pip, dip, tip.

Hand frame (:func:`hand_frame`): origin at the wrist node, z toward the fingers (wrist -> middle
MCP), x out of the palm, y from the ring MCP toward the index MCP (orthogonalised), completing a
right-handed frame. For a right hand y points toward the thumb; the left hand is the exact mirror
(y points away from the thumb), as on the robot, so a mirrored node set has mirrored local
coordinates and both hands share one solver configuration.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from teleop.core.conventions import FINGERTIP_NODES, NODE_NAMES, NUM_NODES, SIDES
from teleop.core.errors import ConfigError, TeleopError, choices
from teleop.core.yamlio import load_yaml

N_NODES = NUM_NODES
N_WEBXR = 25
TIPS = FINGERTIP_NODES                        # thumb, index, middle, ring, little tips
NODE_MAP_FILE = Path(__file__).parent / "configs" / "webxr_nodes.yaml"


class RetargetInputError(TeleopError):
    """Human input handed to the retargeter is malformed (shape, NaN, missing nodes)."""


@lru_cache(maxsize=4)
def load_node_map(path: str | Path = NODE_MAP_FILE) -> tuple[np.ndarray, np.ndarray]:
    """(webxr_to_nodes (21, 25), nodes_to_webxr (25, 21)) from the YAML data file."""
    raw = load_yaml(path, "node map")
    try:
        fwd = np.asarray(raw["webxr_to_nodes"], float)
        inv = np.asarray(raw["nodes_to_webxr"], float)
        names = tuple(raw["nodes"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the node map: {exc}") from exc
    if fwd.shape != (N_NODES, N_WEBXR) or inv.shape != (N_WEBXR, N_NODES):
        raise ConfigError(f"{path}: webxr_to_nodes must be (21, 25) and nodes_to_webxr (25, 21), "
                          f"got {fwd.shape} and {inv.shape}")
    if names != NODE_NAMES:
        raise ConfigError(f"{path}: 'nodes' must list {list(NODE_NAMES)}")
    return fwd, inv


def _check_points(x, count: int, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim not in (2, 3) or x.shape[-2:] != (count, 3):
        raise RetargetInputError(f"{what} must have shape ({count}, 3) or (N, {count}, 3), got {x.shape}")
    return x


def webxr_to_nodes(joints) -> np.ndarray:
    """WebXR joint positions (25, 3) or (N, 25, 3) -> nodes (21, 3) or (N, 21, 3)."""
    joints = _check_points(joints, N_WEBXR, "WebXR joints")
    fwd, _ = load_node_map()
    return np.einsum("ij,...jk->...ik", fwd, joints)


def nodes_to_webxr(nodes) -> np.ndarray:
    """Nodes (…, 21, 3) -> an approximate WebXR joint set (…, 25, 3) (exact on the 21 shared joints)."""
    nodes = _check_points(nodes, N_NODES, "hand nodes")
    _, inv = load_node_map()
    return np.einsum("ij,...jk->...ik", inv, nodes)


def validate_nodes(nodes, tracked=None, max_missing: int = 6) -> np.ndarray:
    """Check one hand's nodes (21, 3); returns a (21,) weight mask (1 tracked, 0 missing).

    Untracked nodes may hold anything (NaN included); tracked nodes must be finite. The wrist and
    the middle MCP define the hand frame and are always required.
    """
    nodes = np.asarray(nodes, dtype=np.float64)
    if nodes.shape != (N_NODES, 3):
        raise RetargetInputError(f"hand nodes must have shape (21, 3), got {nodes.shape}")
    mask = np.ones(N_NODES, bool) if tracked is None else np.asarray(tracked, bool)
    if mask.shape != (N_NODES,):
        raise RetargetInputError(f"tracked flags must have shape (21,), got {mask.shape}")
    bad = [NODE_NAMES[i] for i in np.flatnonzero(mask & ~np.isfinite(nodes).all(axis=1))]
    if bad:
        raise RetargetInputError(f"hand nodes contain NaN/inf at tracked nodes: {', '.join(bad)}")
    missing = [NODE_NAMES[i] for i in np.flatnonzero(~mask)]
    required = [n for n in ("wrist", "index_mcp", "middle_mcp", "ring_mcp") if n in missing]
    if required:
        raise RetargetInputError(f"required hand nodes missing: {', '.join(required)} (they define the hand frame)")
    if len(missing) > max_missing:
        raise RetargetInputError(f"{len(missing)} hand nodes missing (at most {max_missing}): {', '.join(missing)}")
    return mask.astype(np.float64)


def nodes_from_mapping(points: dict) -> np.ndarray:
    """A {node name: (3,)} mapping -> (21, 3); every node is required, unknown names are refused."""
    unknown = [k for k in points if k not in NODE_NAMES]
    if unknown:
        raise RetargetInputError(f"unknown hand node {unknown[0]!r}; valid: {choices(NODE_NAMES)}")
    missing = [n for n in NODE_NAMES if n not in points]
    if missing:
        raise RetargetInputError(f"missing hand nodes: {', '.join(missing)}")
    return np.array([np.asarray(points[n], float).reshape(3) for n in NODE_NAMES])


def hand_frame(nodes, side: str) -> tuple[np.ndarray, np.ndarray]:
    """(origin (3,), rotation (3, 3) whose columns are the x, y, z axes) of one hand's nodes (21, 3)."""
    if side not in SIDES:
        raise RetargetInputError(f"side must be {choices(SIDES)}, got {side!r}")
    nodes = np.asarray(nodes, float)
    wrist = nodes[0]
    z = nodes[9] - wrist
    across = nodes[5] - nodes[13]                 # ring MCP -> index MCP: toward the thumb side
    z_norm = np.linalg.norm(z)
    y = across - z * (across @ z) / max(z_norm ** 2, 1e-18)
    if z_norm < 1e-6 or np.linalg.norm(y) < 1e-6:
        raise RetargetInputError("hand nodes are degenerate: wrist, index/middle/ring MCP are collinear")
    z, y = z / z_norm, y / np.linalg.norm(y)
    if side == "left":
        y = -y                                     # the mirror convention: y away from the thumb
    return wrist.copy(), np.column_stack([np.cross(y, z), y, z])


PALM_NODES = (0, 5, 9, 13)                        # wrist, index/middle/ring MCP: rigid on most hands


def palm_rotation(nodes, template) -> np.ndarray:
    """Rotation (3, 3) that best maps the template's palm nodes onto ``nodes``' (Kabsch).

    ``template`` (21, 3) is the robot hand's neutral keypoints in its palm frame; the result is the
    human palm frame in the nodes' frame. Least squares over four palm nodes averages tracking noise
    better than a frame built from three points.
    """
    a = np.asarray(template, float)[list(PALM_NODES)]
    b = np.asarray(nodes, float)[list(PALM_NODES)]
    H = (a - a.mean(axis=0)).T @ (b - b.mean(axis=0))
    U, _, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    return Vt.T @ np.diag([1.0, 1.0, d]) @ U.T


def to_local(nodes, origin, rot) -> np.ndarray:
    """World nodes (…, 3) -> coordinates in the frame (origin (3,), rot (3, 3))."""
    return (np.asarray(nodes, float) - origin) @ rot
