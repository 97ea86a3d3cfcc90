"""Names the whole project agrees on, defined once: the robot's sides and the 21 glove nodes.

Every device, the retargeter and the robot's keypoint sites use this node order; other modules
import these names (some re-export them) instead of spelling them out again.
"""
from __future__ import annotations

SIDES: tuple[str, ...] = ("left", "right")

FINGERS: tuple[str, ...] = ("index", "middle", "ring", "little")
THUMB_NODES: tuple[str, ...] = ("cmc", "mcp", "ip", "tip")            # the keypoint sites along each digit
FINGER_NODES: tuple[str, ...] = ("mcp", "pip", "dip", "tip")

# 0 wrist; 1-4 thumb cmc, mcp, ip, tip; 5-8 index mcp, pip, dip, tip; 9-12 middle; 13-16 ring; 17-20 little.
NODE_NAMES: tuple[str, ...] = ("wrist", *(f"thumb_{j}" for j in THUMB_NODES),
                               *(f"{d}_{j}" for d in FINGERS for j in FINGER_NODES))
NUM_NODES: int = len(NODE_NAMES)
FINGERTIP_NODES: tuple[int, ...] = tuple(i for i, n in enumerate(NODE_NAMES) if n.endswith("_tip"))  # thumb first

# Operator actions a device may ask for (a headset HUD button, a glove button): the names of
# ``ui.flow.FlowController``'s ``_on_<name>`` handlers, which decide what each means in the
# current mode exactly as the keys do. Defined here so devices (which may not import ``ui``)
# validate against the same list the window runs; a test checks every name has its handler.
# Arguments: ``reject`` a reason (text) or none (then ``reason`` N picks the Nth listed reason),
# ``back`` seconds, ``continue`` a tick; the others take none.
OPERATOR_ACTIONS: tuple[str, ...] = ("record", "accept", "reject", "reason", "undo", "rerecord", "end_early",
                                     "back", "continue", "next", "play", "live", "engage")
