"""Subcommands of ``teleop``: one module each, each with ``register(subparsers)``."""
