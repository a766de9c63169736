"""Signature keys as ``keyword`` values, both ways: what HTTP engines store and match.

A positional field's key (band *i* of ``minhash``, block *i* of ``simhash``) only matches
the same position in another document, so it is written ``"i:hex"``; a set-like field's
key (``exact``, ``winnow``, ``modm``, ...) is ``"hex"``. Hex digits are 16, lowercase, so a
term query on the string is a match on the 64-bit key.

>>> render_keys("simhash", np.array([255, 1], dtype=np.uint64))
['0:00000000000000ff', '1:0000000000000001']
>>> parse_keys("simhash", ['1:0000000000000001', '0:00000000000000ff']).tolist()
[255, 1]
>>> parse_keys("winnow", render_keys("winnow", np.array([2**64 - 1], dtype=np.uint64))).tolist()
[18446744073709551615]
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

#: Fields whose keys are positional (band / block number matters for the keyword).
POSITIONAL = frozenset({"minhash", "simhash"})


def render_keys(field_name: str, keys: np.ndarray) -> list[str]:
    """Keyword strings for an engine: ``"i:hex"`` for positional fields, ``"hex"`` else."""
    if field_name in POSITIONAL:
        return [f"{i}:{int(k):016x}" for i, k in enumerate(keys)]
    return [f"{int(k):016x}" for k in keys]


def parse_keys(field_name: str, values: Iterable[str]) -> np.ndarray:
    """Keyword strings back to the uint64 key array (positional fields in position order)."""
    vals = list(values or ())
    if field_name in POSITIONAL:
        pairs = sorted((int(v.split(":", 1)[0]), int(v.rsplit(":", 1)[-1], 16)) for v in vals)
        return np.array([k for _, k in pairs], dtype=np.uint64)
    return np.array([int(v, 16) for v in vals], dtype=np.uint64)
