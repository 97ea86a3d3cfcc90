#!/usr/bin/env python
"""Extract the captured hand poses that ship with the ``iwer`` npm package into a JSON data file.

iwer (Meta's WebXR emulation runtime, MIT licence) ships three hand poses captured from a person
on a Quest headset: ``relaxed`` (its default), ``pinch`` and ``point``. Each is 25 joint transforms
(W3C WebXR hand joint order) relative to the hand's target-ray space, as column-major 4x4 matrices,
of a LEFT hand (iwer mirrors them for the right hand), plus each joint's radius and the grip offset.
This script reads them from ``devices/webxr/node_modules/iwer/lib/device/configs/hand/*.js``
verbatim and writes ``teleop/control/synthetic/iwer_hand_poses.json``.

    /work/main/.venv/bin/python bench/extract_iwer_poses.py [path/to/node_modules/iwer]
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "teleop/control/synthetic/iwer_hand_poses.json"
JOINTS = json.loads((ROOT.parent / "shared/reference/webxr_hand_joints.json").read_text())["joints"] \
    if (ROOT.parent / "shared/reference/webxr_hand_joints.json").exists() else None
NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"


def parse(js: str) -> dict:
    joints = {}
    for m in re.finditer(r"'?([a-z-]+)'?:\s*\{\s*offsetMatrix:\s*\[([^\]]*)\],\s*radius:\s*(" + NUMBER + ")", js):
        joints[m.group(1)] = {"matrix": [float(v) for v in re.findall(NUMBER, m.group(2))],
                              "radius": float(m.group(3))}
    grip = re.search(r"gripOffsetMatrix:\s*\[([^\]]*)\]", js)
    for name, j in joints.items():
        if len(j["matrix"]) != 16:
            raise ValueError(f"{name}: expected 16 numbers, got {len(j['matrix'])}")
    return {"joints": joints, "grip": [float(v) for v in re.findall(NUMBER, grip.group(1))] if grip else None}


def main(argv) -> int:
    pkg = Path(argv[1]) if len(argv) > 1 else ROOT / "devices/webxr/node_modules/iwer"
    version = json.loads((pkg / "package.json").read_text())["version"]
    poses = {}
    for name in ("relaxed", "pinch", "point"):
        raw = parse((pkg / f"lib/device/configs/hand/{name}.js").read_text())
        order = JOINTS or list(raw["joints"])
        if sorted(order) != sorted(raw["joints"]):
            raise ValueError(f"{name}: joints differ from the WebXR list")
        poses[name] = {"matrices": [raw["joints"][j]["matrix"] for j in order],
                       "radii": [raw["joints"][j]["radius"] for j in order], "grip": raw["grip"]}
    data = {"source": f"iwer {version} (npm), lib/device/configs/hand/{{relaxed,pinch,point}}.js",
            "licence": "MIT, Copyright (c) Meta Platforms, Inc. and affiliates",
            "about": "Hand poses captured from a person (Quest hand tracking), as shipped by iwer: per pose, 25 "
                     "joint transforms of a LEFT hand in its target-ray space, column-major 4x4 (WebXR joint "
                     "order), joint radii (m) and the grip offset. iwer mirrors x for the right hand.",
            "joints": order, "poses": poses}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {', '.join(poses)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
