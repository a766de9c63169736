"""The records of signing: a :class:`Document` in, a :class:`Signed` out (everything neardup
stores for it), and a batch of :class:`Signed` packed into a few flat arrays
(:class:`PackedBatch`, :func:`pack`, :func:`unpack`: what a signing worker sends back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..sketches.hashing import U64
from ..sketches.ragged import join
from ..keys.encoding import render_keys


@dataclass
class Document:
    """A document to index or query: id, text and whatever else the user keeps.

    ``tokens``, when given, are the document's canonical tokens, already made by a
    :class:`~neardup.canonical.Canonicalizer` with this index's config (for pipelines
    that canonicalize once and reuse the tokens); signing then skips canonicalization.
    """

    id: str
    text: str
    title: str | None = None
    lang: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    tokens: list[str] | None = None


@dataclass
class PackedBatch:
    """The :class:`Signed` of a batch, without their documents, as a few flat arrays
    (:func:`pack`): what a signing worker sends back, pickled in a few calls rather than a
    few per document."""

    langs: list[str]
    n_tokens: list[int]
    exact: list[str]
    simhash: list[int]
    shingles: tuple[np.ndarray, np.ndarray]  # (values, offsets)
    keys: dict[str, tuple[np.ndarray, np.ndarray]]  # field -> (values, offsets)
    fields: list[tuple[str, ...]]  # each document's key fields
    too_short: list[bool]


def pack(signed: Sequence[Signed]) -> PackedBatch:
    """``signed`` as a :class:`PackedBatch` (see :func:`unpack`)."""
    return PackedBatch(
        langs=[s.lang for s in signed],
        n_tokens=[s.n_tokens for s in signed],
        exact=[s.exact for s in signed],
        simhash=[s.simhash for s in signed],
        shingles=join([s.shingles for s in signed]),
        keys=_joined_keys(signed),
        fields=[tuple(s.keys) for s in signed],
        too_short=[s.too_short for s in signed],
    )


def _joined_keys(signed: Sequence[Signed]) -> dict:
    """Field -> the keys of every document for it joined (none for a document without it),
    the fields in the order they first appear."""
    fields = list(dict.fromkeys(f for s in signed for f in s.keys))
    return {f: join([s.keys.get(f, ()) for s in signed]) for f in fields}


def unpack(packed: PackedBatch, docs: Sequence[Document]) -> list[Signed]:
    """The :class:`Signed` of :func:`pack`, for ``docs`` (the documents signed, in order);
    each array a view of the batch's.

    >>> u = lambda *v: np.array(v, dtype=U64)
    >>> signed = [
    ...     Signed(doc=Document("a", "x y"), lang="en", n_tokens=2, shingles=u(3, 9),
    ...            exact="e1", simhash=5, keys={"minhash": u(1, 2)}),
    ...     Signed(doc=Document("b", "z"), lang="en", n_tokens=1, shingles=u(4),
    ...            exact="e2", simhash=6, keys={"winnow": u(7)}),
    ... ]
    >>> again = unpack(pack(signed), [s.doc for s in signed])
    >>> [(s.id, s.shingles.tolist(), {f: k.tolist() for f, k in s.keys.items()}) for s in again]
    [('a', [3, 9], {'minhash': [1, 2]}), ('b', [4], {'winnow': [7]})]
    """
    sh, so = packed.shingles
    out = []
    for i, d in enumerate(docs):
        keys = {
            f: packed.keys[f][0][packed.keys[f][1][i] : packed.keys[f][1][i + 1]]
            for f in packed.fields[i]
        }
        out.append(
            Signed(
                doc=d,
                lang=packed.langs[i],
                n_tokens=packed.n_tokens[i],
                shingles=sh[so[i] : so[i + 1]],
                exact=packed.exact[i],
                simhash=packed.simhash[i],
                keys=keys,
                too_short=packed.too_short[i],
            )
        )
    return out


@dataclass
class Signed:
    """Everything neardup stores for one document."""

    doc: Document
    lang: str
    n_tokens: int
    shingles: np.ndarray  # sorted distinct uint64 shingle hashes, S(A, w)
    exact: str
    simhash: int
    keys: dict[str, np.ndarray]  # field -> uint64 keys
    #: Too short for its shingle size to tell texts apart (:func:`too_short`).
    too_short: bool = False

    @property
    def id(self) -> str:
        return self.doc.id

    @property
    def n_shingles(self) -> int:
        return len(self.shingles)

    @property
    def wordless(self) -> bool:
        """No canonical token: signed with no keys, never a near-duplicate of anything."""
        return self.n_tokens == 0

    def keywords(self, field_name: str, version: int) -> list[str]:
        """The keys of ``field_name`` as an engine index of signature ``version`` holds them."""
        return render_keys(field_name, self.keys.get(field_name, np.empty(0, dtype=U64)), version)
