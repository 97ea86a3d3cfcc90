"""``teleop app``: the operator desktop window (what ``make run`` starts)."""
from __future__ import annotations


def _run(args) -> int:
    from ui.app import run_app      # imported here: only this command needs Qt

    return run_app()


def register(sub) -> None:
    parser = sub.add_parser("app", help="open the operator desktop window")
    parser.set_defaults(func=_run)
