"""How signature keys and shingles are written down for the engines, both ways.

* **Keywords** (HTTP engines): a positional field's key (band *i* of ``minhash``, block *i*
  of ``simhash``) only matches the same position in another document, so it is written
  ``"i:key"``; a set-like field's key (``exact``, ``winnow``, ``modm``, ...) is ``"key"``.
  The 64-bit key is written as its signature version says (:func:`keyword`): from version 7
  (:data:`BASE64_FROM`) the unpadded base64url of its 8 big-endian bytes, 11 characters;
  before it, 16 lowercase hex digits. Either way a term query on the string is a match on
  the key (keyword fields are case-sensitive).
* **Shingles** (HTTP engines): the sorted uint64 hashes, little-endian, in base64.
* **Posting keys** (embedded engine): ``(field << 44) | (key mod 2**44)`` in one integer.
* **The keys column** (embedded engine): :mod:`neardup.engines.embedded.keycolumn`.

>>> render_keys("simhash", np.array([255, 1], dtype=np.uint64), 6)
['0:00000000000000ff', '1:0000000000000001']
>>> render_keys("simhash", np.array([255, 1], dtype=np.uint64), 7)
['0:AAAAAAAAAP8', '1:AAAAAAAAAAE']
>>> parse_keys("simhash", ['1:AAAAAAAAAAE', '0:AAAAAAAAAP8'], 7).tolist()
[255, 1]
>>> parse_keys("winnow", render_keys("winnow", np.array([2**64 - 1], dtype=np.uint64), 7), 7)
array([18446744073709551615], dtype=uint64)
>>> decode_shingles(encode_shingles(np.array([3, 2**63], dtype=np.uint64))).tolist()
[3, 9223372036854775808]
>>> posting_key(2, 2**64 - 1) == (2 << 44) | (2**44 - 1)
True
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..sketches.hashing import U64
from .builtin import BUILTIN

#: Fields whose keys are positional (band / block number matters for the keyword).
POSITIONAL = frozenset(name for name, sig in BUILTIN.items() if sig.positional)
#: The first signature version whose keywords are base64url (the ones before: hex).
BASE64_FROM = 7
#: base64 to base64url (RFC 4648, section 5).
_URLSAFE = bytes.maketrans(b"+/", b"-_")
#: Bits of a signature key kept in a posting (the field number sits above them).
KEY_BITS = 44
KEY_MASK = (1 << KEY_BITS) - 1


# -- keywords: the reference form, one key at a time ----------------------------------------------
def keyword(key: int, version: int) -> str:
    """The text of one 64-bit key in a keyword field of an index of signature ``version``:
    the unpadded base64url (RFC 4648, section 5) of its 8 big-endian bytes from version 7,
    its 16 lowercase hex digits before.

    >>> keyword(255, 6), keyword(255, 7), keyword(2**64 - 1, 7)
    ('00000000000000ff', 'AAAAAAAAAP8', '__________8')
    """
    if version < BASE64_FROM:
        return f"{key:016x}"
    return base64.urlsafe_b64encode(int(key).to_bytes(8, "big")).rstrip(b"=").decode("ascii")


def key_of(text: str, version: int) -> int:
    """The key a keyword of :func:`keyword` writes down (a malformed one is refused).

    >>> key_of("AAAAAAAAAP8", 7), key_of("00000000000000ff", 6)
    (255, 255)
    """
    if version < BASE64_FROM:
        return int(text, 16)
    raw = base64.urlsafe_b64decode(text + "=")
    if len(raw) != 8:
        raise ValueError(f"a key is 11 base64url characters, not {text!r}")
    return int.from_bytes(raw, "big")


# -- keywords: the fast form, all keys of a field at once (tested equal to the reference) ---------
def _texts(keys: np.ndarray, version: int) -> list[str]:
    """:func:`keyword` of each key, split from one hex or base64 of all of them (a document has
    about 100 keys, written and asked for each time it is stored or looked up). base64 of 9
    bytes is 12 characters without padding, so each key is given a zero ninth byte: its first
    11 characters are the key's own (the 11th holds the last 4 bits and 2 zero bits), and the
    12th is made a space to split at. Hex is written with a space after each 8 bytes."""
    be = np.ascontiguousarray(keys, dtype=">u8")
    if version < BASE64_FROM:
        return be.tobytes().hex(" ", 8).split()
    nine = np.zeros((len(be), 9), dtype=np.uint8)
    nine[:, :8] = be.view(np.uint8).reshape(-1, 8)
    text = np.frombuffer(binascii.b2a_base64(nine.tobytes(), newline=False), dtype=np.uint8)
    spaced = text.reshape(-1, 12).copy()
    spaced[:, 11] = ord(" ")
    return spaced.tobytes().translate(_URLSAFE).decode("ascii").split()


def _keys_of(texts: list[str], version: int) -> np.ndarray:
    """:func:`key_of` of each keyword, decoded in one call."""
    if version < BASE64_FROM:
        return np.array([int(t, 16) for t in texts], dtype=np.uint64)
    if any(len(t) != 11 for t in texts):
        raise ValueError(f"a key is 11 base64url characters, not {texts!r}")
    try:
        raw = base64.urlsafe_b64decode("A".join(texts) + "A" if texts else "")
    except binascii.Error as e:
        raise ValueError(f"keys that are not base64url: {texts!r}") from e
    return (
        np.frombuffer(raw, dtype=np.uint8)
        .reshape(-1, 9)[:, :8]
        .copy()
        .view(">u8")
        .ravel()
        .astype(np.uint64)
    )


def render_keys(field_name: str, keys: np.ndarray, version: int) -> list[str]:
    """Keyword strings for an engine index of signature ``version``: ``"i:key"`` for
    positional fields, ``"key"`` else (:func:`keyword`)."""
    texts = _texts(keys, version)
    if field_name in POSITIONAL:
        return [f"{i}:{t}" for i, t in enumerate(texts)]
    return texts


def render_batch(
    keys: Sequence[Mapping[str, np.ndarray]], version: int
) -> list[dict[str, list[str]]]:
    """:func:`render_keys` of every field of every document of a batch (``keys``: each
    document's field -> uint64 keys), fields in each document's order, from one encode of all
    the batch's keys, split per document and field by their offsets. What a ``_bulk`` of a
    batch's documents holds; equal to :func:`render_keys` field by field.

    >>> render_batch([{"simhash": np.array([255], dtype=np.uint64), "exact": np.array([1])},
    ...               {"exact": np.array([], dtype=np.uint64)}], 7)
    [{'simhash': ['0:AAAAAAAAAP8'], 'exact': ['AAAAAAAAAAE']}, {'exact': []}]
    """
    arrays = [np.asarray(a, dtype=U64).ravel() for ks in keys for a in ks.values()]
    if not arrays:
        return [{} for _ in keys]
    texts = _texts(np.concatenate(arrays), version)
    prefixes = [f"{i}:" for i in range(max(len(a) for a in arrays))]
    out: list[dict[str, list[str]]] = []
    at = 0
    sizes = iter(arrays)
    for ks in keys:
        doc: dict[str, list[str]] = {}
        for field in ks:
            end = at + len(next(sizes))
            if field in POSITIONAL:
                doc[field] = list(map(str.__add__, prefixes, texts[at:end]))
            else:
                doc[field] = texts[at:end]
            at = end
        out.append(doc)
    return out


def parse_keys(field_name: str, values: Iterable[str], version: int) -> np.ndarray:
    """Keyword strings of an index of signature ``version`` back to the uint64 key array
    (positional fields in position order)."""
    vals = list(values or ())
    if field_name in POSITIONAL:
        pairs = sorted((int(p), t) for p, t in (v.split(":", 1) for v in vals))
        return _keys_of([t for _, t in pairs], version)
    return _keys_of(vals, version)


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
