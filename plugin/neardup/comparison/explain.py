"""Why two documents are (or are not) near-duplicates: :func:`compare` explains one pair
with its exact similarities, the canonical shingles and the raw passages they share
(:mod:`neardup.comparison.highlight`), and which signatures' keys collide.

>>> from neardup import Config, Document, Signer
>>> cmp = compare(Signer(Config(shingle_size=2)), Document("a", "the quick brown fox jumps"),
...               Document("b", "a quick brown fox sleeps"))
>>> cmp.resemblance, cmp.shared_shingles, cmp.exact_equal
(0.5, ['brown fox', 'quick brown'], False)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..keys.encoding import POSITIONAL
from ..signing.records import Document
from ..signing.signer import Signer
from ..sketches.hashing import hash_strings
from ..sketches.minhash import MinHash
from ..sketches.shingles import combine
from ..sketches.simhash import hamming
from ..sketches.verify import intersection_size, passes_length_filter, similarity
from .highlight import shared_passage_texts

#: The most shared canonical shingles :meth:`NearDup.compare` lists (``intersection`` counts
#: them all): a text of millions of words would otherwise list millions of strings.
MAX_SHARED_SHINGLES = 1000


def shingle_hashes(tokens: Sequence[str], w: int, seed: int) -> np.ndarray:
    """The word shingle hashes of ``tokens`` in order (those the signer stores, with repeats)."""
    return (
        combine(hash_strings(tokens if isinstance(tokens, list) else list(tokens), seed), w)
        if tokens
        else np.empty(0, dtype=np.uint64)
    )


def shared_shingle_strings(
    ta: Sequence[str], hb: np.ndarray, w: int, seed: int, limit: int = MAX_SHARED_SHINGLES
) -> list[str]:
    """The word shingles of tokens ``ta`` that another text has too (``hb``: its
    :func:`shingle_hashes`): the first ``limit`` distinct ones in ``ta``'s order, sorted.
    Matched on their hashes, so only the strings listed are made.

    >>> shared_shingle_strings("a b c d e".split(), shingle_hashes("x b c d y".split(), 2, 1), 2, 1)
    ['b c', 'c d']
    """
    if not ta or not len(hb):
        return []
    ha = shingle_hashes(ta, w, seed)
    pos = np.flatnonzero(np.isin(ha, hb))
    _, first = np.unique(ha[pos], return_index=True)  # each distinct shingle at its first place
    width = min(w, len(ta))
    return sorted(" ".join(ta[i : i + width]) for i in np.sort(pos[first])[:limit].tolist())


@dataclass(kw_only=True)
class Comparison:
    """Why two documents are (or are not) near-duplicates."""

    a: str
    b: str
    resemblance: float
    containment: float  # c(a, b): share of a inside b (as Match.containment and Pair.containment)
    containment_ba: float  # c(b, a)
    intersection: int
    shingles_a: int
    shingles_b: int
    passes_length_filter: bool
    minhash_estimate: float
    simhash_hamming: int
    exact_equal: bool
    collisions: dict[str, dict[str, int]]  # field -> {"shared": n, "of": total in a}
    #: canonical shingles (for Persian, anchor pieces): the first MAX_SHARED_SHINGLES, sorted
    shared_shingles: list[str]
    #: the raw passages of ``a`` behind the shingles it shares with ``b``, in order
    shared_passages: list[str] = field(default_factory=list)
    #: each side too short for the shingle size to tell texts apart
    #: (:func:`~neardup.signing.signer.too_short`): then ``exact_equal`` needs the same raw
    #: words, not only the same canonical tokens
    too_short_a: bool = False
    too_short_b: bool = False
    #: canonical tokens of each side
    tokens_a: int = 0
    tokens_b: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compare(signer: Signer, da: Document, db: Document) -> Comparison:
    """Explain the pair ``da``, ``db`` under ``signer``'s config: exact similarities, shared
    shingles and the raw passages behind them, which signatures collide."""
    # each text canonicalized once: a's tokens kept for its shared shingles and passages,
    # b's only until its shingle hashes are made
    ca = signer.canonical(da)
    sa = signer.sign_canonical([da], [ca])[0]
    c = signer.config
    w = c.shingle_size_for(sa.lang)
    cb = signer.canonical(db)
    sb = signer.sign_canonical([db], [cb])[0]
    hb = shingle_hashes(cb.tokens, w, c.seed) if c.shingle == "word" else None
    del cb
    sim = similarity(sa.shingles, sb.shingles)
    mha = MinHash.from_shingles(sa.shingles, c.num_perm, c.seed, c.minhash_scheme)
    mhb = MinHash.from_shingles(sb.shingles, c.num_perm, c.seed, c.minhash_scheme)
    collisions = {f: _collision(f, sa.keys[f], sb.keys.get(f)) for f in sa.keys}
    shared_strings = [] if hb is None else shared_shingle_strings(ca.tokens, hb, w, c.seed)
    del hb
    passages = shared_passage_texts(
        da.text,
        db.text,
        signer.canonicalizer,
        da.lang or sa.lang,
        db.lang or sb.lang,
        shingles_b=sb.shingles,
        canonical_a=ca if da.tokens is None else None,  # (passages come from the text)
    )
    # a text too short to tell texts apart is an exact copy only of the same raw words
    exact = sa.exact == sb.exact and (
        not (sa.too_short or sb.too_short) or da.text.split() == db.text.split()
    )
    return Comparison(
        a=da.id,
        b=db.id,
        resemblance=sim.resemblance,
        containment=sim.containment,
        containment_ba=sim.containment_ba,
        intersection=sim.intersection,
        shingles_a=sim.size_a,
        shingles_b=sim.size_b,
        passes_length_filter=passes_length_filter(sim.size_a, sim.size_b, c.threshold),
        minhash_estimate=mha.jaccard(mhb),
        simhash_hamming=hamming(sa.simhash, sb.simhash),
        exact_equal=exact,
        collisions=collisions,
        shared_shingles=shared_strings,
        shared_passages=passages,
        too_short_a=sa.too_short,
        too_short_b=sb.too_short,
        tokens_a=sa.n_tokens,
        tokens_b=sb.n_tokens,
    )


def _collision(field: str, ka: np.ndarray, kb: np.ndarray | None) -> dict[str, int]:
    """How many of a's keys ``ka`` of one field b shares (``kb``): at the same position for a
    positional field, else as sets.

    >>> u = lambda *v: np.array(v, dtype=np.uint64)
    >>> _collision("minhash", u(1, 2, 3), u(1, 9, 3)), _collision("winnow", u(1, 2), u(2, 1))
    ({'shared': 2, 'of': 3}, {'shared': 2, 'of': 2})
    """
    kb = np.empty(0, dtype=np.uint64) if kb is None else kb
    if field in POSITIONAL and len(ka) == len(kb):
        shared = int(np.count_nonzero(ka == kb))
    else:
        shared = intersection_size(np.unique(ka), np.unique(kb))
    return {"shared": shared, "of": int(len(ka))}
