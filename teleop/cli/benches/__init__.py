"""Benchmarks run by ``teleop bench NAME``: one module each.

A module defines ``NAME`` (str), ``run(args) -> dict`` (JSON-ready figures) and optionally
``add_arguments(parser)``. Benchmarks print JSON so tools can read them; docs/benchmarks.md
records the figures with the command that produced them.
"""
