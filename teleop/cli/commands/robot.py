"""``teleop robot info [--json]``: the embodiment as the rest of the tool chain sees it."""
from __future__ import annotations

import json

from teleop.core.conventions import SIDES
from teleop.robot import load_params
from teleop.sim.scene import build_scene


def robot_info(params_path: str | None = None) -> dict:
    scene = build_scene(load_params(params_path) if params_path else None)
    m = scene.model
    actions = []
    for name in scene.layout.action_joints:
        lo, hi = m.jnt_range[m.joint(name).id]
        actions.append({"name": name, "lower": float(lo), "upper": float(hi)})
    return {
        "nu": int(m.nu), "nq": int(m.nq), "nv": int(m.nv),
        "timestep": float(m.opt.timestep),
        "control_hz": float(scene.params.physics.control_hz),
        "substeps": scene.substeps,
        "cameras": list(scene.layout.cameras),
        "actions": actions,
        "observation": {"dim": scene.layout.obs_dim,
                        "layout": [f"qpos[{scene.layout.action_dim}]", f"qvel[{scene.layout.action_dim}]",
                                   *(f"{s}_wrist pos[3] quat[4]" for s in SIDES)]},
        "keypoints": {s: list(scene.layout.hands[s].keypoints) for s in SIDES},
        "fingerprint": scene.fingerprint,
    }


def _info(args) -> int:
    info = robot_info(args.params)
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"model {info['fingerprint']}: nq={info['nq']} nv={info['nv']} nu={info['nu']}, "
          f"{1 / info['timestep']:.0f} Hz physics, {info['control_hz']:.0f} Hz control")
    print("cameras:", ", ".join(info["cameras"]))
    for i, a in enumerate(info["actions"]):
        print(f"  {i:2d} {a['name']:<28} [{a['lower']:+.4f}, {a['upper']:+.4f}]")
    return 0


def register(sub) -> None:
    parser = sub.add_parser("robot", help="inspect the robot model")
    robot_sub = parser.add_subparsers(dest="robot_command", metavar="ACTION", required=True)
    info = robot_sub.add_parser("info", help="joints, action order, cameras, rates")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.add_argument("--params", help="robot parameter file (default: the built-in robot.yaml)")
    info.set_defaults(func=_info)
