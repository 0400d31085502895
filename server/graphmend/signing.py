"""A per-user secret that signs the records graphmend writes for this user (issue 68).

A proof record says an unsafe fix was proved on the user's own run, and with the user's
`apply-proved-fixes` it lets `graphmend fix` apply that fix. A repository can ship a record, so a
record counts only when it carries an HMAC made with a key only this user's graphmend can read:
`<user cache folder>/graphmend/signing-key`, made on first use, readable by the user alone (as
Jupyter signs the notebooks it trusts). The signature covers the record's canonical JSON.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from .untrusted import UntrustedFileError, read_bytes

SIGNATURE = "signature"
_KEY_FILE = "signing-key"
_KEY_BYTES = 32


def user_cache_folder() -> Path:
    """graphmend's folder in the user's cache (XDG_CACHE_HOME, ~/Library/Caches, %LOCALAPPDATA%):
    outside any repository, so nothing a repository ships lands there."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "graphmend"


def _key(create: bool) -> bytes | None:
    """The user's signing key; made when `create` and there is none (None: none, or unreadable)."""
    try:
        path = user_cache_folder() / _KEY_FILE
    except (RuntimeError, KeyError):  # no home folder to be found
        return None
    try:
        key = read_bytes(path, 4 * _KEY_BYTES)
        return key if len(key) >= _KEY_BYTES else None
    except UntrustedFileError:
        if not create or os.path.lexists(path):
            return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:  # another process made it first
        return _key(create=False)
    except OSError:
        return None
    key = secrets.token_hex(_KEY_BYTES).encode("ascii")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key)
    return key


def _digest(record: dict[str, Any], key: bytes) -> str:
    body = {k: v for k, v in record.items() if k != SIGNATURE}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, canonical.encode("ascii"), hashlib.sha256).hexdigest()


def signed(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with this user's signature (unsigned when no key can be made: it then never counts)."""
    key = _key(create=True)
    return {**record, SIGNATURE: _digest(record, key)} if key is not None else dict(record)


def signed_by_this_user(record: dict[str, Any]) -> bool:
    """`record` carries a signature this user's key made over exactly its contents."""
    signature = record.get(SIGNATURE)
    key = _key(create=False)
    return isinstance(signature, str) and key is not None and hmac.compare_digest(signature, _digest(record, key))


def user_salt() -> bytes:
    """A value only this user's graphmend knows, for keys a repository must not predict (the
    cache's: an entry planted under a predicted key would hide findings); empty when no key can be
    made (a read-only home), which predicts nothing worse than before."""
    key = _key(create=True)
    return hashlib.sha256(b"graphmend cache\0" + key).digest() if key is not None else b""
