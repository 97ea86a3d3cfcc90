"""``teleop record --device DEVICE --task ID [--episodes N]``: run episodes headless and report them.

Consecutive episodes run on one session (as in the app), each a take. Takes are saved to
``--store`` (default: $TELEOP_STORE or ~/.local/share/bidex-teleop/takes) unless ``--no-save``.
Every device option is a flag generated from the device's registered config.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from teleop.cli.device_flags import add_device_options, device_options
from teleop.control.episode import Episode, EpisodeOptions, device_configs, timing_figures
from teleop.core.paths import default_store


def _summary(episode: Episode, result, take, reports) -> dict:
    return {"continued_from": take.meta.continued_from if take is not None else None,
            "task": result.task_id, "device": episode.opts.device, "seed_index": episode.opts.seed_index,
            "episode_index": episode.opts.episode_index, "ticks": len(reports),
            "strict_success": result.strict_success, "progress": result.progress,
            "latch_steps": {s.name: s.latch_step for s in result.subtasks},
            "first_failure_step": result.first_failure_step, "terminated_by": result.terminated_by,
            "marked_ticks": sum(r.marked for r in reports),
            "take": str(take.path) if take is not None else None, "timing_ms": timing_figures(reports)}


def _print(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary), flush=True)
        return
    print(f"{summary['task']} episode {summary['episode_index']}: strict success {summary['strict_success']}, "
          f"progress {summary['progress']:.0f}/100 in {summary['ticks']} ticks "
          f"({summary['marked_ticks']} held for dropouts)")
    for name, step in summary["latch_steps"].items():
        print(f"  {'latched at ' + str(step) if step is not None else 'not latched':>16}  {name}")
    if summary["take"] is not None:
        print(f"take: {summary['take']}", flush=True)


def _run(args) -> int:
    config = device_configs()[args.device]
    opts = EpisodeOptions(task=args.task, device=args.device, seed_index=args.seed, episode_index=args.episode,
                          realtime=args.realtime, max_seconds=args.max_seconds, retarget_config=args.retarget,
                          profile=args.profile, device_options=device_options(args, config),
                          continue_from=args.continue_from, at_tick=args.at, horizon_from_store=True)
    episode = Episode(opts)
    store = None
    if not args.no_save:
        from recordings.store import TakeStore
        store = TakeStore(Path(args.store))
        report = store.open()
        # Files the store cannot use are moved aside and named; recording carries on regardless.
        for q in report.quarantined:
            print(f"teleop record: quarantined {q.line()}", file=sys.stderr)
        for path in report.recovered:
            print(f"teleop record: recovered interrupted take {path.name}", file=sys.stderr)
    announced = []

    def on_connect(device) -> None:           # once: the device now knows its real address
        if not announced:
            print(f"retarget configuration: {episode.retarget.origin}", file=sys.stderr, flush=True)
            print(device.connection_info().banner(), file=sys.stderr, flush=True)
            if config.horizon_from_engage:
                print("the episode's time starts when you engage (pinch and hold)", file=sys.stderr, flush=True)
            announced.append(True)

    def on_episode(result, take, reports) -> None:
        _print(_summary(episode, result, take, reports), args.json)

    try:
        episode.run_many(args.episodes, store, operator=args.operator, on_connect=on_connect, on_episode=on_episode)
    finally:
        if store is not None:
            store.close()
    return 0


def register(sub) -> None:
    p = sub.add_parser("record", help="record episodes headless (synthetic, replay, glove or webxr) and report them")
    p.add_argument("--task", help="task id (see `teleop tasks list`); a replay uses its take's task")
    p.add_argument("--device", default="synthetic", choices=sorted(device_configs()))
    p.add_argument("--seed", type=int, default=0, help="seed index")
    p.add_argument("--episode", type=int, default=0, help="episode index of the first episode")
    p.add_argument("--episodes", type=int, default=1, help="consecutive episodes to record on one session")
    p.add_argument("--realtime", action="store_true", default=None,
                   help="pace at the control rate (always for glove/webxr; synthetic/replay run as fast as possible)")
    p.add_argument("--max-seconds", type=float,
                   help="each episode's horizon in seconds (default: the task's); a headset's counts from engage")
    p.add_argument("--retarget", help="retarget configuration YAML (default: the built-in one)")
    p.add_argument("--profile", help="operator profile YAML (see `teleop calibrate`)")
    p.add_argument("--store", default=str(default_store()), help="take store folder")
    p.add_argument("--no-save", action="store_true", help="run and report without saving a take")
    p.add_argument("--operator", default=os.environ.get("USER", "operator"))
    p.add_argument("--json", action="store_true", help="one JSON line per episode")
    p.add_argument("--continue-from", metavar="TAKE", help="rewind this take file to --at and keep recording from "
                   "there: the new take is its first TICK ticks plus the new ones (it replays from its initial state)")
    p.add_argument("--at", type=int, metavar="TICK", help="with --continue-from: the tick to continue from")
    add_device_options(p, device_configs())
    p.set_defaults(func=_run)
