"""Errors about take files and datasets; messages name the file and the field."""
from teleop.core.errors import TeleopError


class RecordingsError(TeleopError):
    """A request to the recordings library that cannot be met (an unknown choice, an empty group)."""


class TakeError(TeleopError):
    """A take file or journal is missing, truncated, corrupted or inconsistent."""

    def __init__(self, path, message: str):
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.detail = message          # the message without the path (for lines that name it already)
