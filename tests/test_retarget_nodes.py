"""Node maps, validation and hand frames."""
import numpy as np
import pytest

from retarget.nodes import (NODE_NAMES, RetargetInputError, hand_frame, load_node_map,
                            nodes_from_mapping, nodes_to_webxr, palm_rotation, to_local, validate_nodes,
                            webxr_to_nodes)
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng


def _hand(rng=None):
    """A plausible right hand (21, 3): fingers along +z, thumb toward +y, palm toward +x."""
    pts = [[0, 0, 0], [0.01, 0.025, 0.02], [0.02, 0.05, 0.05], [0.03, 0.06, 0.08], [0.035, 0.07, 0.1]]
    for y in (0.03, 0.01, -0.01, -0.027):
        pts += [[0.0, y, 0.095], [0.01, y, 0.14], [0.02, y, 0.17], [0.03, y, 0.19]]
    pts = np.array(pts, float)
    return pts if rng is None else pts + rng.normal(0, 0.001, pts.shape)


def test_node_map_is_21x25_and_round_trips():
    fwd, inv = load_node_map()
    assert fwd.shape == (21, 25) and inv.shape == (25, 21)
    nodes = _hand()
    np.testing.assert_allclose(webxr_to_nodes(nodes_to_webxr(nodes)), nodes)
    batch = np.stack([nodes, nodes + 1])
    assert webxr_to_nodes(nodes_to_webxr(batch)).shape == (2, 21, 3)


def test_webxr_selects_the_named_joints():
    joints = np.arange(75, dtype=float).reshape(25, 3)
    nodes = webxr_to_nodes(joints)
    np.testing.assert_array_equal(nodes[0], joints[0])          # wrist
    np.testing.assert_array_equal(nodes[5], joints[6])          # index mcp = index phalanx proximal
    np.testing.assert_array_equal(nodes[20], joints[24])        # little tip = pinky tip


@pytest.mark.parametrize("shape", [(24, 3), (25, 2), (3, 2, 25, 3)])
def test_webxr_wrong_shape_is_rejected(shape):
    with pytest.raises(RetargetInputError, match="shape"):
        webxr_to_nodes(np.zeros(shape))


def test_validate_nodes_errors():
    nodes = _hand()
    assert validate_nodes(nodes).sum() == 21
    bad = nodes.copy()
    bad[8] = np.nan
    with pytest.raises(RetargetInputError, match="index_tip"):
        validate_nodes(bad)
    tracked = np.ones(21, bool)
    tracked[8] = False
    assert validate_nodes(bad, tracked)[8] == 0.0               # untracked NaN is fine
    tracked[0] = False
    with pytest.raises(RetargetInputError, match="wrist"):
        validate_nodes(nodes, tracked)
    with pytest.raises(RetargetInputError, match=r"\(21, 3\)"):
        validate_nodes(nodes[:20])
    many = np.ones(21, bool)
    many[[4, 8, 12, 16, 20, 3, 7]] = False
    with pytest.raises(RetargetInputError, match="7 hand nodes missing"):
        validate_nodes(nodes, many)


def test_nodes_from_mapping_names_missing_and_unknown():
    nodes = _hand()
    full = dict(zip(NODE_NAMES, nodes))
    np.testing.assert_array_equal(nodes_from_mapping(full), nodes)
    with pytest.raises(RetargetInputError, match="thumb_tip"):
        nodes_from_mapping({k: v for k, v in full.items() if k != "thumb_tip"})
    with pytest.raises(RetargetInputError, match="pinky_tip"):
        nodes_from_mapping({**full, "pinky_tip": [0, 0, 0]})


def test_hand_frame_axes_and_mirror():
    nodes = _hand()
    origin, rot = hand_frame(nodes, "right")
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) > 0
    assert rot[:, 2] @ [0, 0, 1] > 0.99 and rot[:, 1] @ [0, 1, 0] > 0.95 and rot[:, 0] @ [1, 0, 0] > 0.95
    mirrored = nodes * [1, -1, 1]
    o2, rot2 = hand_frame(mirrored, "left")
    assert np.linalg.det(rot2) > 0
    np.testing.assert_allclose(to_local(mirrored, o2, rot2), to_local(nodes, origin, rot) * [1, -1, 1], atol=1e-12)
    with pytest.raises(RetargetInputError, match="side"):
        hand_frame(nodes, "middle")
    with pytest.raises(RetargetInputError, match="degenerate"):
        hand_frame(np.zeros((21, 3)), "right")


def test_palm_rotation_recovers_a_rotation():
    rng = stable_rng("palm-rot")
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    q *= np.sign(np.linalg.det(q))
    nodes = _hand()
    np.testing.assert_allclose(palm_rotation(0.9 * nodes @ q.T + 0.3, nodes), q, atol=1e-9)


def test_bad_node_map_file(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("webxr_to_nodes: [[1, 0]]\nnodes_to_webxr: [[1]]\nnodes: []\n")
    with pytest.raises(ConfigError, match="21, 25"):
        load_node_map(path)
