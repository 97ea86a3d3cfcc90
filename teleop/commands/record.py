"""``teleop record --device DEVICE --task ID``: run one episode headless and report it.

Takes are saved to ``--store`` (default: $TELEOP_STORE or ~/.local/share/bidex-teleop/takes)
unless ``--no-save``.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from teleop.episode import DEVICE_BUILDERS, Episode, EpisodeOptions
from teleop.errors import ConfigError
from teleop.paths import default_store


def _device_options(args) -> dict:
    options = {"glove": {"endpoint": args.endpoint, "haptics_bind": args.haptics_bind},
               "webxr": {"host": args.host, "port": args.port, "pairing_code": args.pairing_code}}
    return {k: v for k, v in options.get(args.device, {}).items() if v is not None}


def _summary(episode: Episode, result, take) -> dict:
    return {"task": result.task_id, "device": episode.opts.device, "seed_index": episode.opts.seed_index,
            "episode_index": episode.opts.episode_index, "ticks": len(episode.reports),
            "strict_success": result.strict_success, "progress": result.progress,
            "latch_steps": {s.name: s.latch_step for s in result.subtasks},
            "first_failure_step": result.first_failure_step, "terminated_by": result.terminated_by,
            "marked_ticks": sum(r.marked for r in episode.reports),
            "take": str(take.path) if take is not None else None, "timing_ms": episode.timing()}


def _run(args) -> int:
    if not args.task and not args.from_take:
        raise ConfigError("--task is required (or --from TAKE with --device replay)")
    opts = EpisodeOptions(task=args.task, device=args.device, seed_index=args.seed, episode_index=args.episode,
                          realtime=args.realtime, max_seconds=args.max_seconds, retarget_config=args.retarget,
                          profile=args.profile, take=args.from_take, device_options=_device_options(args))
    episode = Episode(opts)
    banner = getattr(episode.device, "banner", None)
    if banner is not None:
        print(banner(), file=sys.stderr)
    store = None
    if not args.no_save:
        from recordings.store import TakeStore
        store = TakeStore(Path(args.store))
        store.open()
    try:
        result, take = episode.run(store, operator=args.operator)
    finally:
        if store is not None:
            store.close()
    summary = _summary(episode, result, take)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['task']}: strict success {summary['strict_success']}, progress {summary['progress']:.0f}/100 "
              f"in {summary['ticks']} ticks ({summary['marked_ticks']} held for dropouts)")
        for name, step in summary["latch_steps"].items():
            print(f"  {'latched at ' + str(step) if step is not None else 'not latched':>16}  {name}")
        if take is not None:
            print(f"take: {summary['take']}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("record", help="run one episode headless (synthetic, replay, glove or webxr) and report it")
    p.add_argument("--task", help="task id (see `teleop tasks list`); a replay uses its take's task")
    p.add_argument("--device", default="synthetic", choices=sorted(DEVICE_BUILDERS))
    p.add_argument("--seed", type=int, default=0, help="seed index")
    p.add_argument("--episode", type=int, default=0, help="episode index")
    p.add_argument("--from", dest="from_take", help="replay: the take file whose operator frames to play")
    p.add_argument("--realtime", action="store_true", default=None,
                   help="pace at 25 Hz (always for glove/webxr; synthetic/replay run as fast as possible)")
    p.add_argument("--max-seconds", type=float, help="stop after this long (default: the task's horizon)")
    p.add_argument("--retarget", help="retarget configuration YAML (default: the built-in one)")
    p.add_argument("--profile", help="operator profile YAML (see `teleop calibrate`)")
    p.add_argument("--store", default=str(default_store()), help="take store folder")
    p.add_argument("--no-save", action="store_true", help="run and report without saving a take")
    p.add_argument("--operator", default=os.environ.get("USER", "operator"))
    p.add_argument("--json", action="store_true")
    glove = p.add_argument_group("glove")
    glove.add_argument("--endpoint", help="glove ZeroMQ endpoint (default tcp://127.0.0.1:5570)")
    glove.add_argument("--haptics-bind", help="haptics PUB bind address (default tcp://*:5571)")
    headset = p.add_argument_group("webxr headset")
    headset.add_argument("--host", help="address to serve on (default 0.0.0.0)")
    headset.add_argument("--port", type=int, help="HTTPS/WSS port (default 8443)")
    headset.add_argument("--pairing-code", help="fixed pairing code (default: a fresh random one)")
    p.set_defaults(func=_run)
