"""API keys: generated with `secrets`, stored only as an HMAC-SHA256 keyed by the server secret.

A key reads `orr_<prefix>_<secret>`; the prefix is stored in clear so a person can tell keys apart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

KEY_PATTERN = re.compile(r"^orr_([A-Za-z0-9]{8})_([A-Za-z0-9_-]{32,64})$")


@dataclass(frozen=True)
class NewKey:
    """A freshly generated key: `plaintext` is shown once, only `key_hash` is stored."""

    plaintext: str
    prefix: str
    key_hash: str


def hash_key(plaintext: str, server_secret: str) -> str:
    """The keyed hash stored for an API key."""
    return hmac.new(server_secret.encode(), plaintext.encode(), hashlib.sha256).hexdigest()


def generate_key(server_secret: str) -> NewKey:
    """A new random API key and its stored hash."""
    prefix = secrets.token_hex(4)
    plaintext = f"orr_{prefix}_{secrets.token_urlsafe(32)}"
    return NewKey(plaintext, prefix, hash_key(plaintext, server_secret))


def is_well_formed(plaintext: str) -> bool:
    """Whether the string has the shape of an Orrery API key (checked before any lookup)."""
    return KEY_PATTERN.match(plaintext) is not None
