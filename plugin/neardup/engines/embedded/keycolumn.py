"""The embedded engine's ``keys`` column and posting keys: how a document's signature keys
are written in its row, and turned into the integers of ``postings``.

The ``keys`` column holds every signature key of the document (for deletes, upserts and
:class:`~neardup.engines.base.StoredDoc.keys`) in a compact form that depends only on bytes
stored in the same row, never on signing code that may change between versions: keys that
are a sorted subset of the document's own shingle hashes (winnowing fingerprints, MOD_m
samples) are a bitmap over the stored shingles (1 bit per shingle instead of 8 bytes per
key); the ``exact`` key, when it is the first 8 bytes of the stored digest, is a 1-byte tag;
anything else (MinHash bands, SimHash blocks, extended signatures) is raw uint64. Each form
is checked on write, so every field round-trips exactly. A batch's columns are written in
one compiled pass (:mod:`neardup.engines.embedded.packing`).

A posting stores ``(field << 44) | (key mod 2**44)`` as one integer
(:func:`~neardup.keys.encoding.posting_array`).

>>> sh = np.array([5, 9, 12, 40], dtype=np.uint64)
>>> keys = {"minhash": np.array([7, 1], dtype=np.uint64),
...         "winnow": np.array([9, 40], dtype=np.uint64)}
>>> fields = ("minhash", "winnow")
>>> back = unpack_keys(fields, pack_keys(fields, keys, sh, b""), sh, b"")
>>> {f: v.tolist() for f, v in back.items()}
{'minhash': [7, 1], 'winnow': [9, 40]}
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ...keys.encoding import posting_keys
from ...sketches.hashing import U64
from ...sketches.ragged import join
from ...signing.records import Signed
from ..base import PreparedBatch
from .schema import exact_value

#: The form of a field in the column (a tag byte; the same in :mod:`.packing`).
RAW, SUBSET, EXACT = 0, 1, 2


def pack_keys(
    fields: Sequence[str], keys: dict[str, np.ndarray], shingles: np.ndarray, exact: bytes | str
) -> bytes:
    """Keys of all fields (in ``fields`` order) as one BLOB, each field in its smallest exact form.

    Per field a tag byte, then: ``RAW`` a varint count and the uint64 keys (little-endian);
    ``SUBSET`` a little-endian bitmap over ``shingles`` (sorted distinct uint64) of the keys,
    which are themselves sorted distinct shingles, where that is shorter; ``EXACT`` nothing
    (the one key is the first 8 bytes, big-endian, of the 16-byte ``exact`` digest).
    """
    return pack_keys_many(fields, joined_keys(fields, [keys]), join([shingles]), [exact])[0]


def joined_keys(
    fields: Sequence[str], keys: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each field's keys of many documents (``keys[i]`` of document i; a field it lacks has
    none) as one ragged array (:func:`~neardup.sketches.ragged.join`)."""
    return {f: join([k.get(f, ()) for k in keys]) for f in fields}


def pack_keys_many(
    fields: Sequence[str],
    keys: Mapping[str, tuple[np.ndarray, np.ndarray]],
    shingles: tuple[np.ndarray, np.ndarray],
    exact: Sequence[bytes | str],
) -> list[bytes]:
    """:func:`pack_keys` of many documents in one compiled pass
    (:func:`neardup.engines.embedded.packing.pack_keys`): each field's keys and the shingles
    as ragged arrays (:func:`joined_keys`, :func:`~neardup.sketches.ragged.join`), ``exact[i]`` the
    digest of document i."""
    from ...sketches.loops import loops

    packing = loops("neardup.engines.embedded.packing")
    parts = [keys[f] for f in fields]
    values, offsets = join([p[0] for p in parts])
    offsets = np.array([p[1] + offsets[i] for i, p in enumerate(parts)], dtype=np.int64).reshape(
        len(fields), len(exact) + 1
    )
    blob, bounds = packing.pack_keys(values, offsets, *shingles, *_digest_keys(exact))
    data = blob.tobytes()
    return [data[a:b] for a, b in itertools.pairwise(bounds.tolist())]


def _digest_keys(exact: Sequence[bytes | str]) -> tuple[np.ndarray, np.ndarray]:
    """The exact key of each document (the first 8 bytes, big-endian, of its 16-byte digest)
    and whether it has one (a digest stored as text has none to refer to).

    >>> [x.tolist() for x in _digest_keys([bytes(range(16)), "not-hex"])]
    [[283686952306183, 0], [True, False]]
    """
    digests = [e if isinstance(e, bytes) and len(e) == 16 else None for e in exact]
    keys = np.array([int.from_bytes(e[:8], "big") if e else 0 for e in digests], dtype=U64)
    return keys, np.array([e is not None for e in digests], dtype=np.bool_)


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
    """The keys of each field of a keys column (:func:`pack_keys` back); a ValueError for a
    tag that is none of the three."""
    n = len(shingles)
    out: dict[str, np.ndarray] = {}
    pos = 0
    for f in fields:
        tag = blob[pos]
        pos += 1
        if tag == RAW:
            c, pos = _read_varint(blob, pos)
            out[f] = np.frombuffer(blob, dtype="<u8", count=c, offset=pos).astype(U64)
            pos += 8 * c
        elif tag == SUBSET:
            nb = (n + 7) // 8
            mask = np.unpackbits(
                np.frombuffer(blob, dtype=np.uint8, count=nb, offset=pos),
                count=n,
                bitorder="little",
            )
            out[f] = shingles[mask.astype(bool)]
            pos += nb
        elif tag == EXACT:
            out[f] = np.array([int.from_bytes(exact[:8], "big")], dtype=U64)
        else:
            raise ValueError(f"corrupt keys column (tag {tag})")
    return out


@dataclass(frozen=True)
class KeyColumns(PreparedBatch):
    """The keys columns of a signed batch made in advance (:func:`prepare_key_columns`),
    by document id, and the fields they were made for."""

    fields: tuple[str, ...]
    columns: dict[str, bytes]


def prepare_key_columns(fields: tuple[str, ...], signed: Sequence[Signed]) -> KeyColumns:
    """The keys column of each signed document for ``fields``, made together:
    :meth:`EmbeddedEngine.batch_preparer`."""
    return KeyColumns(
        fields=fields,
        columns={s.id: b for s, b in zip(signed, _keys_columns(fields, signed), strict=True)},
    )


def keys_column(fields: tuple[str, ...], s: Signed) -> bytes:
    """The keys column of a signed document for ``fields`` (:func:`keys_columns` of one)."""
    return keys_columns(fields, [s])[0]


def keys_columns(
    fields: tuple[str, ...], signed: Sequence[Signed], prepared: PreparedBatch | None = None
) -> list[bytes]:
    """The keys column of each signed document for ``fields`` (:func:`pack_keys`): the one
    ``prepared`` holds where it was made for the same fields, the others made together."""
    made = (
        prepared.columns if isinstance(prepared, KeyColumns) and prepared.fields == fields else {}
    )
    out: list[bytes | None] = [made.get(s.id) for s in signed]
    todo = [i for i, b in enumerate(out) if b is None]
    if todo:
        for i, b in zip(todo, _keys_columns(fields, [signed[i] for i in todo]), strict=True):
            out[i] = b
    return out  # type: ignore[return-value]


def _keys_columns(fields: tuple[str, ...], signed: Sequence[Signed]) -> list[bytes]:
    """:func:`pack_keys_many` of ``signed``."""
    return pack_keys_many(
        fields,
        joined_keys(fields, [s.keys for s in signed]),
        join([np.ascontiguousarray(s.shingles, dtype="<u8") for s in signed]),
        [exact_value(s.exact) for s in signed],
    )


def posting_jsons(field_id: int, values: np.ndarray, offsets: np.ndarray) -> list[str]:
    """For each document's keys (ragged: ``values[offsets[i] : offsets[i + 1]]``) of field
    number ``field_id``: its distinct posting keys in order, as a JSON array (for
    ``json_each``), all made in one numpy pass.

    >>> posting_jsons(1, *join([np.array([5, 7, 5], dtype=np.uint64), np.array([], np.uint64)]))
    ['[17592186044421, 17592186044423]', '[]']
    """
    flat = posting_keys(field_id, values)
    # (a list of ints prints as its JSON array)
    return [
        str(list(dict.fromkeys(flat[lo:hi]))) for lo, hi in itertools.pairwise(offsets.tolist())
    ]
