"""One base error for the whole application, so callers can catch everything we raise on purpose."""


class TeleopError(Exception):
    """Base class for every error this project raises deliberately (bad input, bad files, misuse)."""


class ConfigError(TeleopError):
    """A configuration or data file is malformed; the message names the file, field and choices."""


class StateMismatchError(TeleopError):
    """A serialised state was made by a different model than the one it is restored into."""


def choices(valid) -> str:
    """Format valid choices for an error message: ``'a', 'b' or 'c'``."""
    items = [repr(v) for v in valid]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
