"""How signature keys and shingles are written down for the engines, both ways.

* **Keywords** (HTTP engines): a positional field's key (band *i* of ``minhash``, block *i*
  of ``simhash``) only matches the same position in another document, so it is written
  ``"i:hex"``; a set-like field's key (``exact``, ``winnow``, ``modm``, ...) is ``"hex"``.
  Hex digits are 16, lowercase, so a term query on the string is a match on the 64-bit key.
* **Shingles** (HTTP engines): the sorted uint64 hashes, little-endian, in base64.
* **Posting keys** (embedded engine): ``(field << 44) | (key mod 2**44)`` in one integer.
* **The keys column** (embedded engine): :mod:`neardup.engines.embedded.keycolumn`.

>>> render_keys("simhash", np.array([255, 1], dtype=np.uint64))
['0:00000000000000ff', '1:0000000000000001']
>>> parse_keys("simhash", ['1:0000000000000001', '0:00000000000000ff']).tolist()
[255, 1]
>>> parse_keys("winnow", render_keys("winnow", np.array([2**64 - 1], dtype=np.uint64))).tolist()
[18446744073709551615]
>>> decode_shingles(encode_shingles(np.array([3, 2**63], dtype=np.uint64))).tolist()
[3, 9223372036854775808]
>>> posting_key(2, 2**64 - 1) == (2 << 44) | (2**44 - 1)
True
"""

from __future__ import annotations

import base64
from typing import Any, Iterable

import numpy as np

from ..sketches.hashing import U64
from .builtin import BUILTIN

#: Fields whose keys are positional (band / block number matters for the keyword).
POSITIONAL = frozenset(name for name, sig in BUILTIN.items() if sig.positional)
#: Bits of a signature key kept in a posting (the field number sits above them).
KEY_BITS = 44
KEY_MASK = (1 << KEY_BITS) - 1


# -- keywords -------------------------------------------------------------------------------------
def render_keys(field_name: str, keys: np.ndarray) -> list[str]:
    """Keyword strings for an engine: ``"i:hex"`` for positional fields, ``"hex"`` else. The
    16 hex digits of each key (``f"{k:016x}"``) are cut from the hex of all the keys'
    big-endian bytes, made in one call (a document has about 130 keys, written and asked
    for each time it is stored or looked up)."""
    digits = np.ascontiguousarray(keys, dtype=">u8").tobytes().hex()
    hexes = [digits[i : i + 16] for i in range(0, len(digits), 16)]
    if field_name in POSITIONAL:
        return [f"{i}:{h}" for i, h in enumerate(hexes)]
    return hexes


def parse_keys(field_name: str, values: Iterable[str]) -> np.ndarray:
    """Keyword strings back to the uint64 key array (positional fields in position order)."""
    vals = list(values or ())
    if field_name in POSITIONAL:
        pairs = sorted((int(v.split(":", 1)[0]), int(v.rsplit(":", 1)[-1], 16)) for v in vals)
        return np.array([k for _, k in pairs], dtype=np.uint64)
    return np.array([int(v, 16) for v in vals], dtype=np.uint64)


# -- shingles --------------------------------------------------------------------------------------
def encode_shingles(shingles: np.ndarray) -> str:
    """base64 of the little-endian uint64 sorted shingle hashes."""
    return base64.b64encode(np.ascontiguousarray(shingles, dtype="<u8").tobytes()).decode("ascii")


def decode_shingles(value: str | None) -> np.ndarray:
    if not value:
        return np.empty(0, dtype=np.uint64)
    return np.frombuffer(base64.b64decode(value), dtype="<u8").astype(np.uint64)


# -- posting keys ----------------------------------------------------------------------------------
def posting_key(field_id: int, key: int) -> int:
    """The integer a posting stores for ``key`` of field number ``field_id``."""
    return (field_id << KEY_BITS) | (int(key) & KEY_MASK)


def posting_array(field_id: int, keys: Any) -> np.ndarray:
    """The posting keys (int64) of ``keys`` of field number ``field_id``."""
    a = np.asarray(keys, dtype=U64).ravel() & U64(KEY_MASK)
    return a.astype(np.int64) + (field_id << KEY_BITS)


def posting_keys(field_id: int, keys: Any) -> list[int]:
    return posting_array(field_id, keys).tolist()
