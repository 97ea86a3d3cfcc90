"""Retargeting speed and accuracy: per arm / per hand / per tick times, round-trip and stream errors, jitter.

Two operators. The mirrored-robot operator (``retarget.synthetic``: robot motion mapped back through
the exact inverse of the scaling) gives ground-truth joints: errors against them. The person
(``teleop.control.synthetic.person``: human arms and iwer-captured hands, frames through the
headset's message path) has no robot truth: its figures are the arm's error against its target,
the hand's joint angles against the person's, the pinch gap, one-tick jumps and jitter.

With the ``bench`` extra installed (dex-retargeting), the right hand's keypoint stream of each
operator is also retargeted by dex-retargeting's position optimizer and by our hand solver alone
(same targets, same start) and both are reported side by side.
"""
from __future__ import annotations

import numpy as np

from retarget import OperatorProfile, compare, load_config
from retarget.filters import OneEuro
from retarget.synthetic import RobotToHuman, smooth_trajectory
from teleop.core.conventions import SIDES
from teleop.control.operator_map import operator_input
from teleop.control.synthetic.person import HumanOperator, session_motion
from teleop.sim.scene import build_scene
from teleop.core.seeding import stable_rng

NAME = "retarget"


def add_arguments(parser) -> None:
    parser.add_argument("--ticks", type=int, default=500, help="stream length in control ticks (default 500)")
    parser.add_argument("--poses", type=int, default=20, help="random round-trip poses (default 20)")
    parser.add_argument("--noise-mm", type=float, default=1.0, help="keypoint noise of the stream (default 1)")
    parser.add_argument("--no-dex", action="store_true", help="skip the dex-retargeting comparison")
    parser.add_argument("--human-seconds", type=float, default=20.0,
                        help="length of the person operator's session (default 20 s; 0 skips it)")


def _pct(x, q) -> float:
    return round(float(np.percentile(x, q)), 3)


def _kp_err_mm(h, q_true, q_got) -> np.ndarray:
    a, b = h.robot_keypoints(q_true), h.robot_keypoints(q_got)
    return np.concatenate([np.linalg.norm(a[s][2] - b[s][2], axis=1) for s in SIDES]) * 1e3


def _roundtrip(rt, h, scene, lo, hi, poses: int) -> tuple[list[float], int]:
    """Random reachable joint vectors -> human input -> retarget (ticks until settled) -> keypoint error."""
    rng = stable_rng("bench-retarget-roundtrip")
    ready, errs, violations = rt.last.copy(), [], 0
    spread = np.where(np.arange(len(lo)) < 14, 1.0, hi - lo)
    for _ in range(poses):
        q = np.clip(ready + rng.normal(0, 0.25, len(lo)) * spread, lo, hi)
        inp = h.operator_input(q)
        for _ in range(25):
            res = rt.step(inp)
            violations += int(np.sum((res.targets < lo - 1e-9) | (res.targets > hi + 1e-9)))
        errs.extend(_kp_err_mm(h, q, res.targets))
    return errs, violations


def _stream(rt, h, scene, lo, hi, ticks: int, noise_m: float) -> dict:
    rng = stable_rng("bench-retarget-stream")
    traj = smooth_trajectory(scene, ticks, rng)
    out, errs, hand_ms, arm_ms, tick_ms, violations = [], [], [], [], [], 0
    for q in traj:
        res = rt.step(h.operator_input(q, noise_m, rng))
        out.append(res.targets)
        tick_ms.append(res.solve_ms)
        hand_ms += [res.sides[s].hand_ms for s in SIDES]
        arm_ms += [res.sides[s].arm_ms for s in SIDES]
        errs.append(_kp_err_mm(h, q, res.targets))
        violations += int(np.sum((res.targets < lo - 1e-9) | (res.targets > hi + 1e-9)))
    warm = 10                                    # skip the start-up transient from the ready pose
    out, errs = np.array(out)[warm:], np.array(errs)[warm:]
    # Jitter: acceleration the retargeter adds on top of the true motion (RMS over ticks and joints).
    extra = np.diff(out, 2, axis=0) - np.diff(traj[warm:], 2, axis=0)
    return dict(hand_ms=hand_ms[2 * warm:], arm_ms=arm_ms[2 * warm:], tick_ms=tick_ms[warm:], errs=errs,
                jitter=float(np.sqrt(np.mean(extra ** 2))) / scene.control_dt ** 2, violations=violations)


def _hand_targets(rt, h, scene, ticks: int, noise_m: float, side: str = "right"):
    """The stream of :func:`_stream` (same seed, same noise) as one hand's solver targets.

    Returns (targets (T, 21, 3) in the palm frame at robot scale, exactly as the bimanual retargeter
    computes them before its input filter; true hand joints (T, n); start joints (n,)).
    """
    rng = stable_rng("bench-retarget-stream")
    traj = smooth_trajectory(scene, ticks, rng)
    hand_i = rt.idx[side][1]
    targets = []
    for q in traj:
        inp = h.operator_input(q, noise_m, rng)
        targets.append(rt.targets_for(side, inp, inp.hands[side])[2])
    return np.array(targets), traj[:, hand_i], rt.last[hand_i].copy()


def _hand_figures(solver, run, truth, dt, warm: int = 10) -> dict:
    err = compare.keypoint_error_mm(solver, truth[warm:], run.q[warm:])
    return {"hand_ms_p50": _pct(run.ms[warm:], 50), "hand_ms_p99": _pct(run.ms[warm:], 99),
            "stream_err_mm_median": _pct(err, 50), "stream_err_mm_p95": _pct(err, 95),
            "jitter_rad_per_s2": round(compare.jitter(run.q[warm:], truth[warm:], dt), 3)}


def _versus_dex(scene, cfg, ticks: int, noise_m: float) -> dict:
    """Our hand solver and dex-retargeting on the same right-hand target stream."""
    from retarget.hand import HandSolver
    rt = cfg.build(scene, OperatorProfile(hand_length=0.185))
    targets, truth, q0 = _hand_targets(rt, RobotToHuman(rt, scene), scene, ticks, noise_m)
    ours = HandSolver(scene.model, cfg.hand, "right")
    dex = compare.DexHand(ours)
    compare.run_dex(dex, targets[:20], q0)                   # warm-up (torch, nlopt first calls)
    compare.run_ours(ours, targets[:20], q0)
    dt = scene.control_dt
    r_dex = compare.run_dex(dex, targets, q0)
    r_solver = compare.run_ours(ours, targets, q0)
    r_ours = compare.run_ours(ours, targets, q0, OneEuro(cfg.hand_filter), dt)
    theirs, mine = _hand_figures(ours, r_dex, truth, dt), _hand_figures(ours, r_ours, truth, dt)
    return {"dex_retargeting": theirs, "ours_hand": mine,
            "ours_hand_solver_unfiltered": _hand_figures(ours, r_solver, truth, dt),
            "speedup_vs_dex_retargeting": round(theirs["hand_ms_p50"] / mine["hand_ms_p50"], 2),
            "speedup_p99_vs_dex_retargeting": round(theirs["hand_ms_p99"] / mine["hand_ms_p99"], 2),
            "err_ratio_vs_dex_retargeting": round(mine["stream_err_mm_median"] / theirs["stream_err_mm_median"], 3)}


# Robot flexion joint (config order index found by name) for each anatomical joint of the person.
FLEX_JOINTS = {"thumb_mcp": "thumb_mcp_flex", "thumb_ip": "thumb_ip",
               **{f"{f}_{j}": f"{f}_{'mcp_flex' if j == 'mcp' else j}" for f in ("index", "middle", "ring", "little")
                  for j in ("mcp", "pip", "dip")}}


def _human_stream(rt, seconds: float, noise_mm: float):
    """The person's session through the message path: (operator inputs, the person's anatomical
    flexion angles per tick (T, 14) per side, their thumb-index gap (T,) per side)."""
    op = HumanOperator(keypoint_noise_mm=noise_mm, seed=1)
    clean = HumanOperator()
    motion = session_motion(seconds)
    inputs, angles, gaps = [], {s: [] for s in SIDES}, {s: [] for s in SIDES}
    for k in range(int(seconds / 0.04) + 1):
        t = k * 0.04
        states = motion.states(t)
        inputs.append(operator_input(op.frame(k, t, states)))
        for side in SIDES:
            pose = clean.hands[side].pose(states[side].shape)
            hum = clean.hands[side].angles(states[side].shape)
            angles[side].append([hum[a][0] for a in FLEX_JOINTS])
            gaps[side].append(float(np.linalg.norm(pose[4, :3, 3] - pose[9, :3, 3])))
    return inputs, {s: np.array(v) for s, v in angles.items()}, {s: np.array(v) for s, v in gaps.items()}


def _hand_likeness(solver, q: np.ndarray, human_angles: np.ndarray, human_gap: np.ndarray) -> dict:
    """Joint angles against the person's (deg) and the thumb-index gap while the person pinches (mm)."""
    names = [n.removeprefix(f"{solver.side}_") for n in solver.chain.joint_names]
    cols = [names.index(FLEX_JOINTS[a]) for a in FLEX_JOINTS]
    err = np.degrees(np.abs(-q[:, cols] - human_angles))
    pinching = human_gap < 0.01
    gap = np.array([np.linalg.norm(np.subtract(*solver.keypoints(x)[[4, 8]])) for x in q[pinching]]) * 1e3
    return {"joint_err_deg_median": _pct(err, 50), "joint_err_deg_p95": _pct(err, 95),
            "pinch_gap_mm_median": _pct(gap, 50) if gap.size else None,
            "pinch_gap_mm_max": round(float(gap.max()), 3) if gap.size else None}


def _human(scene, cfg, seconds: float, noise_m: float) -> tuple[dict, dict]:
    """The person operator: (figures, data for the dex comparison)."""
    op = HumanOperator()
    rt = cfg.build(scene, op.profile)
    inputs, angles, gaps = _human_stream(rt, seconds, noise_m * 1e3)
    for inp in inputs[:15]:
        rt.step(inp)                              # warm-up from the ready pose (a jump, not measured)
    rt = cfg.build(scene, op.profile)
    out, tick_ms, arm_err, rot_err, targets = [], [], [], [], []
    for inp in inputs:
        res = rt.step(inp)
        out.append(res.targets)
        tick_ms.append(res.solve_ms)
        arm_err += [res.sides[s].arm_pos_err_mm for s in SIDES]
        rot_err += [res.sides[s].arm_rot_err_deg for s in SIDES]
        targets.append(rt.targets_for("right", inp, inp.hands["right"])[2])
    warm = 25                                     # the first second: engaging onto the start pose
    out, dt = np.array(out), scene.control_dt
    jumps = np.abs(np.diff(out[warm:], axis=0))
    arm_cols = np.r_[rt.idx["left"][0], rt.idx["right"][0]]
    hand_cols = np.r_[rt.idx["left"][1], rt.idx["right"][1]]
    jitter = float(np.sqrt(np.mean(np.diff(out[warm:], 2, axis=0) ** 2))) / dt ** 2
    figures = {"ticks": len(inputs), "noise_mm": noise_m * 1e3, "tick_ms_p50": _pct(tick_ms[warm:], 50),
               "tick_ms_p99": _pct(tick_ms[warm:], 99),
               "arm_err_mm_median": _pct(arm_err[2 * warm:], 50), "arm_err_mm_p95": _pct(arm_err[2 * warm:], 95),
               "arm_rot_err_deg_median": _pct(rot_err[2 * warm:], 50),
               "max_arm_jump_rad": round(float(jumps[:, arm_cols].max()), 3),
               "max_hand_jump_rad": round(float(jumps[:, hand_cols].max()), 3), "jitter_rad_per_s2": round(jitter, 3),
               "min_separation_mm": round(min(rt.separation(q) for q in out[warm:]) * 1e3, 1)}
    for side in SIDES:
        solver = rt.hands[side]
        figures[f"{side}_hand"] = _hand_likeness(solver, out[warm:, rt.idx[side][1]], angles[side][warm:],
                                                 gaps[side][warm:])
    hand_i = rt.idx["right"][1]
    return figures, {"targets": np.array(targets), "q": out[:, hand_i], "angles": angles["right"],
                     "gaps": gaps["right"], "q0": cfg.build(scene, op.profile).last[hand_i].copy(), "warm": warm}


def _human_versus_dex(scene, cfg, data) -> dict:
    """dex-retargeting and our hand solver on the person's right-hand targets, side by side."""
    from retarget.hand import HandSolver
    ours = HandSolver(scene.model, cfg.hand, "right")
    dex = compare.DexHand(ours)
    targets, q0, warm, dt = data["targets"], data["q0"], data["warm"], scene.control_dt
    compare.run_dex(dex, targets[:20], q0)
    compare.run_ours(ours, targets[:20], q0)
    out = {}
    for name, run in (("dex_retargeting", compare.run_dex(dex, targets, q0)),
                      ("ours_hand", compare.run_ours(ours, targets, q0, OneEuro(cfg.hand_filter), dt))):
        q = run.q[warm:]
        fig = _hand_likeness(ours, q, data["angles"][warm:], data["gaps"][warm:])
        kp = np.array([ours.keypoints(x) for x in q])
        fig.update({"hand_ms_p50": _pct(run.ms[warm:], 50), "hand_ms_p99": _pct(run.ms[warm:], 99),
                    "tip_err_mm_median": _pct(np.linalg.norm(kp[:, [4, 8, 12, 16, 20]]
                                                             - targets[warm:, [4, 8, 12, 16, 20]], axis=2) * 1e3, 50),
                    "jitter_rad_per_s2": round(float(np.sqrt(np.mean(np.diff(q, 2, axis=0) ** 2))) / dt ** 2, 3)})
        out[name] = fig
    return out


def run(args) -> dict:
    scene = build_scene()
    cfg = load_config()
    # An operator with a smaller hand than the robot's and the default arm: scaling is exercised.
    rt = cfg.build(scene, OperatorProfile(hand_length=0.185))
    h = RobotToHuman(rt, scene)
    ids = [scene.model.joint(n).id for n in scene.layout.action_joints]
    lo, hi = scene.model.jnt_range[ids].T
    _stream(rt, h, scene, lo, hi, 30, 0.0)       # warm-up (imports, caches)
    rt = cfg.build(scene, OperatorProfile(hand_length=0.185))
    h = RobotToHuman(rt, scene)
    s = _stream(rt, h, scene, lo, hi, args.ticks, args.noise_mm / 1e3)
    rt_errs, rt_viol = _roundtrip(rt, h, scene, lo, hi, args.poses)
    out = {
        "hand_ms_p50": _pct(s["hand_ms"], 50), "hand_ms_p99": _pct(s["hand_ms"], 99),
        "arm_ms_p50": _pct(s["arm_ms"], 50), "arm_ms_p99": _pct(s["arm_ms"], 99),
        "tick_ms_p99": _pct(s["tick_ms"], 99),
        "roundtrip_err_mm_median": _pct(rt_errs, 50),
        "stream_err_mm_median": _pct(s["errs"], 50), "stream_err_mm_p95": _pct(s["errs"], 95),
        "jitter_rad_per_s2": round(s["jitter"], 3),
        "limit_violations": s["violations"] + rt_viol,
        "ticks": args.ticks, "poses": args.poses, "noise_mm": args.noise_mm,
    }
    with_dex = compare.dex_available() and not getattr(args, "no_dex", False)
    if with_dex:
        out.update(_versus_dex(scene, cfg, args.ticks, args.noise_mm / 1e3))
    seconds = getattr(args, "human_seconds", 20.0)
    if seconds > 0:
        human, data = _human(scene, cfg, seconds, args.noise_mm / 1e3)
        if with_dex:
            human["versus_dex_retargeting"] = _human_versus_dex(scene, cfg, data)
        out["human_operator"] = human
    return out
