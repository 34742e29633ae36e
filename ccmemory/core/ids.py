"""Deterministic ULIDs for captured memories: the same job and index always give the same id,
so a job re-run after a crash recognises the files it already wrote."""

from __future__ import annotations

import hashlib

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def stable_ulid(key: str, ms: int) -> str:
    rand = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:10], "big")
    value = ((ms & ((1 << 48) - 1)) << 80) | rand
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))
