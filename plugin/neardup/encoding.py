"""How signature keys and shingles are written down for the engines, both ways.

* **Keywords** (HTTP engines): a positional field's key (band *i* of ``minhash``, block *i*
  of ``simhash``) only matches the same position in another document, so it is written
  ``"i:hex"``; a set-like field's key (``exact``, ``winnow``, ``modm``, ...) is ``"hex"``.
  Hex digits are 16, lowercase, so a term query on the string is a match on the 64-bit key.
* **Shingles** (HTTP engines): the sorted uint64 hashes, little-endian, in base64.
* **Posting keys** (embedded engine): ``(field << 44) | (key mod 2**44)`` in one integer.
* **The keys column** (embedded engine): every key of a document in one BLOB, each field in
  its smallest exact form (:func:`pack_keys`).

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
>>> sh = np.array([5, 9, 12, 40], dtype=np.uint64)
>>> keys = {"minhash": np.array([7, 1], dtype=np.uint64),
...         "winnow": np.array([9, 40], dtype=np.uint64)}
>>> packed = pack_keys(("minhash", "winnow"), keys, sh, b"")
>>> {f: v.tolist() for f, v in unpack_keys(("minhash", "winnow"), packed, sh, b"").items()}
{'minhash': [7, 1], 'winnow': [9, 40]}
"""

from __future__ import annotations

import base64
import itertools
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .hashing import U64
from .ragged import join

#: Fields whose keys are positional (band / block number matters for the keyword).
POSITIONAL = frozenset({"minhash", "simhash"})
#: Bits of a signature key kept in a posting (the field number sits above them).
KEY_BITS = 44
KEY_MASK = (1 << KEY_BITS) - 1


# -- keywords -------------------------------------------------------------------------------------
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


# -- the keys column -------------------------------------------------------------------------------
_RAW, _SUBSET, _EXACT = 0, 1, 2


def pack_keys(
    fields: Sequence[str], keys: dict[str, np.ndarray], shingles: np.ndarray, exact: bytes | str
) -> bytes:
    """Keys of all fields (in ``fields`` order) as one BLOB, each field in its smallest exact form.

    Per field a tag byte, then: ``_RAW`` a varint count and the uint64 keys (little-endian);
    ``_SUBSET`` a little-endian bitmap over ``shingles`` (sorted distinct uint64) of the keys,
    which are themselves sorted distinct shingles, where that is shorter; ``_EXACT`` nothing
    (the one key is the first 8 bytes, big-endian, of the 16-byte ``exact`` digest).
    """
    return pack_keys_many(fields, joined_keys(fields, [keys]), join([shingles]), [exact])[0]


def joined_keys(
    fields: Sequence[str], keys: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each field's keys of many documents (``keys[i]`` of document i; a field it lacks has
    none) as one ragged array (:func:`~neardup.ragged.join`)."""
    return {f: join([k.get(f, ()) for k in keys]) for f in fields}


def pack_keys_many(
    fields: Sequence[str],
    keys: Mapping[str, tuple[np.ndarray, np.ndarray]],
    shingles: tuple[np.ndarray, np.ndarray],
    exact: Sequence[bytes | str],
) -> list[bytes]:
    """:func:`pack_keys` of many documents in one compiled pass (:func:`neardup.kernels.pack_keys`):
    each field's keys and the shingles as ragged arrays (:func:`joined_keys`,
    :func:`~neardup.ragged.join`), ``exact[i]`` the digest of document i."""
    from .loops import loops

    kernels = loops()

    parts = [keys[f] for f in fields]
    values, offsets = join([p[0] for p in parts])
    offsets = np.array([p[1] + offsets[i] for i, p in enumerate(parts)], dtype=np.int64).reshape(
        len(fields), len(exact) + 1
    )
    digests = [e if isinstance(e, bytes) and len(e) == 16 else None for e in exact]
    exact_keys = np.array([int.from_bytes(e[:8], "big") if e else 0 for e in digests], dtype=U64)
    blob, bounds = kernels.pack_keys(
        values,
        offsets,
        *shingles,
        exact_keys,
        np.array([e is not None for e in digests], dtype=np.bool_),
    )
    data = blob.tobytes()
    return [data[a:b] for a, b in itertools.pairwise(bounds.tolist())]


def _read_varint(blob: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = blob[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7


def unpack_keys(
    fields: Sequence[str], blob: bytes, shingles: np.ndarray, exact: bytes | str
) -> dict[str, np.ndarray]:
    n = len(shingles)
    out: dict[str, np.ndarray] = {}
    pos = 0
    for f in fields:
        tag = blob[pos]
        pos += 1
        if tag == _RAW:
            c, pos = _read_varint(blob, pos)
            out[f] = np.frombuffer(blob, dtype="<u8", count=c, offset=pos).astype(U64)
            pos += 8 * c
        elif tag == _SUBSET:
            nb = (n + 7) // 8
            mask = np.unpackbits(
                np.frombuffer(blob, dtype=np.uint8, count=nb, offset=pos),
                count=n,
                bitorder="little",
            )
            out[f] = shingles[mask.astype(bool)]
            pos += nb
        elif tag == _EXACT:
            out[f] = np.array([int.from_bytes(exact[:8], "big")], dtype=U64)
        else:
            raise ValueError(f"corrupt keys column (tag {tag})")
    return out
