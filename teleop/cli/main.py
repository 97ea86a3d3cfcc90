"""The ``teleop`` console command. Subcommands are discovered from :mod:`teleop.cli.commands`.

Each module there defines ``register(subparsers)`` that adds its subcommand(s) and sets
``func`` (called with the parsed args; it returns an exit code). Adding a command is adding a
module: there is no central if/elif.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

import teleop.cli.commands
from teleop.core.errors import TeleopError


def _defaults() -> None:
    # Headless-friendly defaults; an explicit environment always wins.
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="teleop", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(teleop.cli.commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"teleop.cli.commands.{info.name}")
        module.register(sub)
    return parser


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):     # not a real file (captured in tests): nothing to flush
        pass


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TeleopError as exc:
        print(f"teleop: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    _defaults()
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()      # a closed pipe surfaces here (after --help too), not at interpreter exit
    except BrokenPipeError:         # `teleop ... | head`: the reader has what it wanted; stop quietly
        _drop_stdout()
        return 141                  # 128 + SIGPIPE, what a shell reports for a command cut off by head


if __name__ == "__main__":
    sys.exit(main())
