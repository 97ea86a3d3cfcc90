"""Fault-injection points: the crash-sensitive code paths call :func:`checkpoint` after each
durable step, so tests (and the soak benchmark) can kill the process exactly there.

Production never changes it; a test replaces it in a child process, e.g.::

    import os, recordings.faults as faults
    faults.checkpoint = lambda step: os._exit(70) if step == "h5_renamed" else None
"""
from __future__ import annotations


def checkpoint(step: str) -> None:
    """Called with the name of the step just completed (see ``FINALIZE_STEPS`` and
    ``EXPORT_STEPS``); does nothing unless a test replaced it."""
