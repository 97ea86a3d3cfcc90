"""``teleop calibrate --device glove|webxr [--out PATH] [--hold S] [--yes] [--json]``: the window's
calibration wizard on a terminal. Connects the device, walks the operator through the poses,
captures each as the average of a short still hold, fits the operator profile and saves it as YAML
(default ``~/.config/bidex-teleop/profiles/$USER.yaml``) for ``teleop record --profile PATH``.

At a terminal each pose is captured when the operator presses Enter; otherwise (or with ``--yes``)
after a countdown of ``--hold`` seconds. Prompts go to stderr (and to a headset's HUD), the summary
or ``--json`` to stdout.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

from devices.base import Device
from devices.config import DeviceConfig, DeviceContext
from retarget import CalibrationSample, OperatorProfile
from teleop.cli.device_flags import add_device_options, device_options
from teleop.control.calibration import (HOLD_SECONDS, STEPS, CalibrationError, Step, capture, fit_and_save,
                                       wait_for_frame)
from teleop.control.episode import device_configs
from teleop.core.errors import TeleopError
from teleop.core.paths import config_dir


def live_configs() -> dict[str, type[DeviceConfig]]:
    """The devices a person wears: a player (synthetic, replay) is made for one episode of a task."""
    return {name: config for name, config in device_configs().items() if not config.per_episode}


def default_out() -> Path:
    return config_dir() / "profiles" / f"{os.environ.get('USER', 'operator')}.yaml"


def _say(text: str = "", end: str = "\n") -> None:
    print(text, file=sys.stderr, end=end, flush=True)


def _ask(question: str) -> str:
    _say(question, end="")
    answer = sys.stdin.readline()
    if not answer:                                 # Ctrl-D: the operator walked away
        raise TeleopError("calibration cancelled")
    return answer.strip()


def _check_out(out: Path, yes: bool, interactive: bool) -> None:
    """Before connecting, so an existing profile is never replaced without the operator knowing."""
    if not out.exists() or yes:
        return
    if not interactive:
        raise TeleopError(f"{out} exists; pass --yes to overwrite it or --out PATH for another file")
    if _ask(f"{out} exists. Overwrite it? [y/N] ").lower() not in ("y", "yes"):
        raise TeleopError(f"{out} kept; pass --out PATH for another file")


def _countdown(seconds: float) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _say(f"  capturing in {math.ceil(left)}…")
        time.sleep(min(1.0, left))


def _step(device: Device, index: int, step: Step, hold: float, interactive: bool) -> CalibrationSample:
    """One pose: prompt, wait (Enter or countdown), capture; at a terminal a refused hold is retried."""
    header = f"Step {index + 1} of {len(STEPS)}: {step.prompt}"
    device.publish_hud({"instruction": step.prompt, "status": f"calibration step {index + 1} of {len(STEPS)}"})
    _say(header)
    while True:
        if interactive:
            _ask("  press Enter to capture… ")
        else:
            _countdown(hold)
        _say(f"  hold still ({hold:g} s)…")
        try:
            return capture(device, step.pose, hold)
        except CalibrationError as exc:
            if not interactive:
                raise
            _say(f"  not captured: {exc}")


def _summary(profile: OperatorProfile, out: Path) -> str:
    return (f"profile {profile.name}: arm {profile.arm_length:.3f} m (upper arm {profile.upper_arm:.3f} m, "
            f"forearm {profile.forearm:.3f} m), hand {profile.hand_length:.3f} m\nsaved {out}")


def _run(args: argparse.Namespace) -> int:
    if not args.hold > 0:
        raise TeleopError(f"--hold must be > 0 seconds, got {args.hold}")
    out = Path(args.out).expanduser()
    interactive = sys.stdin.isatty() and not args.yes
    _check_out(out, args.yes, interactive)
    config = live_configs()[args.device]
    device = config.from_options(**device_options(args, config)).build(DeviceContext())
    device.connect()
    try:
        _say(device.connection_info().banner())
        wait_for_frame(device, args.wait, args.device)
        samples = [_step(device, i, step, args.hold, interactive) for i, step in enumerate(STEPS)]
        profile = fit_and_save(samples, out)
        device.publish_hud({"instruction": "", "status": f"calibrated: arm {profile.arm_length:.2f} m"})
    finally:
        device.close()
    if args.json:
        print(json.dumps({**dataclasses.asdict(profile), "arm_length": profile.arm_length, "path": str(out)}))
    else:
        print(_summary(profile, out), flush=True)
    return 0


def register(sub) -> None:
    configs = live_configs()
    p = sub.add_parser("calibrate", help="fit and save an operator profile (arm lengths, shoulders, hand size) "
                                         "from two held poses",
                       description="Connect the device, hold a T-pose then arms forward, and save the fitted "
                                   "operator profile for `teleop record --profile PATH`. At a terminal Enter "
                                   "captures each pose; otherwise (or with --yes) a countdown of --hold seconds.")
    p.add_argument("--device", required=True, choices=sorted(configs), help="the device the operator wears")
    p.add_argument("--out", metavar="PATH", default=str(default_out()),
                   help="profile YAML to write (default %(default)s)")
    p.add_argument("--hold", metavar="SECONDS", type=float, default=HOLD_SECONDS,
                   help="seconds each pose is held and averaged (and the countdown without a terminal; "
                        "default %(default)s)")
    p.add_argument("--wait", metavar="SECONDS", type=float, default=60.0,
                   help="seconds to wait for the device's first frame (default %(default)s)")
    p.add_argument("--yes", action="store_true",
                   help="never ask: capture on a countdown even at a terminal, overwrite an existing --out")
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    add_device_options(p, configs)
    p.set_defaults(func=_run)
