"""``teleop app``: the operator desktop window (what ``make run`` starts)."""
from __future__ import annotations

import os

from teleop.core.paths import default_store


def _run(args) -> int:
    from ui.app import run_app      # imported here: only this command needs Qt

    return run_app(args.store, args.operator)


def register(sub) -> None:
    parser = sub.add_parser("app", help="open the operator desktop window")
    parser.add_argument("--store", default=str(default_store()), help="take store folder")
    parser.add_argument("--operator", default=os.environ.get("USER", "operator"), help="operator name for takes")
    parser.set_defaults(func=_run)
