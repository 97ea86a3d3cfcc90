"""The headset pairing code: made once, kept beside the certificate, replaced only on purpose.

A headset keeps the page URL (with its ``?code=``) in its history or home screen; a code that
changed at every start turned each app restart into "the page cannot connect" on the headset. So
the code is stored in the config dir (``headset-pairing-code``, owner-only, like the key) and
reused; ``renew=True`` (``--new-pairing-code``) makes a new one, which unpairs every headset.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from devices.webxr.certs import config_dir
from teleop.core.errors import ConfigError

PAIRING_NAME = "headset-pairing-code"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"     # no 0/O, 1/I: read off a screen
CODE_LENGTH = 8
_VALID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def new_pairing_code(length: int = CODE_LENGTH) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def valid_code(code: str) -> bool:
    """A code that survives a URL query unescaped and is long enough not to be guessed in passing."""
    return 4 <= len(code) <= 64 and set(code) <= _VALID_CHARS


def _write(path: Path, code: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(code + "\n")
    os.replace(tmp, path)         # never a half-written code a restart would reject


def ensure_pairing_code(directory=None, fixed: str | None = None, renew: bool = False) -> str:
    """The pairing code to serve with: ``fixed`` if given, else the stored one, else (or with
    ``renew``) a new one. Whatever is returned is stored, so the next start serves the same code."""
    path = config_dir(directory) / PAIRING_NAME
    if fixed:
        code = fixed
    elif not renew and path.is_file():
        code = path.read_text().strip()
        if not valid_code(code):          # hand-edited or truncated: start over rather than fail
            code = new_pairing_code()
    else:
        code = new_pairing_code()
    if not valid_code(code):
        raise ConfigError(f"pairing code {code!r}: use 4-64 letters, digits, '-' or '_'")
    stored = path.read_text().strip() if path.is_file() else None
    if stored != code:
        _write(path, code)
    return code
