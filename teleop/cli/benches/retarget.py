"""Retargeting speed and accuracy: per arm / per hand / per tick times, round-trip and stream errors, jitter.

With the ``bench`` extra installed (dex-retargeting), the same run also retargets the right hand's
keypoint stream with dex-retargeting's position optimizer and with our hand solver alone (same
targets, same start, errors by the same FK) and reports both side by side.
"""
from __future__ import annotations

import numpy as np

from retarget import OperatorProfile, compare, load_config
from retarget.filters import OneEuro
from retarget.synthetic import RobotToHuman, smooth_trajectory
from teleop.core.conventions import SIDES
from teleop.sim.scene import build_scene
from teleop.core.seeding import stable_rng

NAME = "retarget"


def add_arguments(parser) -> None:
    parser.add_argument("--ticks", type=int, default=500, help="stream length in control ticks (default 500)")
    parser.add_argument("--poses", type=int, default=20, help="random round-trip poses (default 20)")
    parser.add_argument("--noise-mm", type=float, default=1.0, help="keypoint noise of the stream (default 1)")
    parser.add_argument("--no-dex", action="store_true", help="skip the dex-retargeting comparison")


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
    if compare.dex_available() and not getattr(args, "no_dex", False):
        out.update(_versus_dex(scene, cfg, args.ticks, args.noise_mm / 1e3))
    return out
