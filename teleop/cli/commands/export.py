"""``teleop export``: validated-pass takes -> a LeRobotDataset v3 (see docs/dataset.md)."""
from __future__ import annotations

import json
import sys


def _summary_text(s) -> str:
    lines = [f"{'exported' if s.ok else 'NOT exported'}: {s.out}",
             f"  episodes {s.episodes}, frames {s.frames}, streams {s.streams}, backend {s.backend}",
             f"  shards rendered {s.rendered}, reused from an interrupted run {s.resumed}",
             f"  {s.seconds:.1f} s, {s.frames_per_s:.1f} frames/s",
             "  per task: " + ", ".join(f"{t} {n}" for t, n in sorted(s.tasks.items()))]
    for take_id, error in s.failed:
        lines.append(f"  FAILED {take_id}: {error}")
    for line in s.quarantined:
        lines.append(f"  QUARANTINED {line}")
    if s.failed:
        lines.append(f"  finished shards are kept in {s.out}.partial; re-run the same command to resume "
                     "(quarantined takes are no longer part of it)")
    return "\n".join(lines)


def _export(args) -> int:
    from recordings.export import ExportIncomplete, ExportSettings, export_dataset
    size = {k: v for k, v in (("width", args.width), ("height", args.height)) if v is not None}
    settings = ExportSettings(repo_id=args.repo_id, **size)
    progress = not args.json and sys.stderr.isatty() or args.progress     # a per-frame bar with the time left
    if args.progress_json:      # JSON lines (frames done/total, takes, estimate) for a GUI driving this process
        def progress(p):
            print(json.dumps(p.to_json()), flush=True)
    try:
        summary = export_dataset(args.store, args.out, tasks=args.tasks, workers=args.workers,
                                 ray_address=args.ray, progress=progress, overwrite=args.overwrite, settings=settings)
    except ExportIncomplete as exc:       # some takes failed: the summary names them; exit 1
        summary = exc.summary
    print(json.dumps(summary.to_json()) if args.json else _summary_text(summary))
    return 0 if summary.ok else 1


def register(sub) -> None:
    p = sub.add_parser("export", help="export validated-pass takes to a LeRobotDataset v3")
    p.add_argument("--store", required=True, help="take store folder (as used by the recorder)")
    p.add_argument("--out", required=True, help="dataset folder to create (built aside, moved into place)")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these task ids (default: every task)")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--ray", metavar="ADDRESS", help="run as Ray tasks: 'auto', 'ray://host:10001' or 'local'")
    p.add_argument("--repo-id", default="bidex/teleop", help="dataset repo id stored in the metadata")
    p.add_argument("--width", type=int, help="image width in pixels (default 480)")
    p.add_argument("--height", type=int, help="image height in pixels (default 360)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out dataset")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--progress-json", action="store_true",
                   help="print JSON progress lines: frames done/total, takes, frames/s, estimated seconds left")
    p.set_defaults(func=_export)
