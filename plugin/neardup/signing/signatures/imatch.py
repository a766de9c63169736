"""I-Match (Chowdhury, Frieder, Grossman & McCabe 2002) and its lexicon-randomized
variant (Kolcz, Chowdhury & Alspector 2004), as 000 and 001 describe them.

Lexicon, from the collection statistics (:mod:`.stats`): a canonical term is kept when

* its length is >= the collection's mean word length and <= 25 characters (000: words
  shorter than the average word length of the collection and longer than 25 are dropped),
* its normalized idf, nidf = ln(N/df)/ln(N), is >= 0.1 (000: dropping idf < 0.1 worked
  best) and <= ``imatch_max_idf`` (1.0), and
* it occurs in at least two documents (the other extreme of idf: a word seen once cannot
  be shared, and a typo must not change a signature).

Signature: the sorted distinct terms of the document that are in the lexicon, SHA-1,
first 64 bits kept as the key. Documents with fewer than ``imatch_min_terms`` (3) such
terms get no key (001: a signature only when the intersection exceeds a threshold), so
short texts do not all collide on the empty set.

``imatch_multi``: the main signature plus ``imatch_lexicons`` (10) more, each over a random
sub-lexicon that keeps a share ``imatch_keep`` (0.67) of the lexicon's terms (decided by a
seeded hash of the term, so the same on every machine); documents match when any one of
the K+1 signatures agrees (same lexicon).
"""

from __future__ import annotations

import hashlib

import numpy as np
import xxhash

from ...sketches.hashing import U64
from ...keys.signature import Signature
from .common import setting
from .stats import Stats

MAX_WORD_LEN = 25


def build_lexicon(stats: Stats, min_idf: float = 0.1, max_idf: float = 1.0) -> frozenset[str]:
    """Terms of mid idf and at least average length (see the module docstring)."""
    avg = stats.avg_word_len
    return frozenset(
        t for t in stats.df if avg <= len(t) <= MAX_WORD_LEN and min_idf <= stats.nidf(t) <= max_idf
    )


def imatch_key(terms: list[str]) -> int:
    """SHA-1 of the sorted distinct terms (joined by newlines), first 64 bits."""
    return int.from_bytes(
        hashlib.sha1("\n".join(sorted(set(terms))).encode("utf-8")).digest()[:8], "big"
    )


class IMatch(Signature):
    name = "imatch"
    components = ("imatch",)

    def __init__(self, canonicalizer, context=None):
        config = canonicalizer.config
        stats = Stats(context or {}, config, self.name)
        self.min_terms = setting(config, "imatch_min_terms", 3)
        self.lexicon = build_lexicon(
            stats,
            setting(config, "imatch_min_idf", 0.1, float),
            setting(config, "imatch_max_idf", 1.0, float),
        )
        self.seed = config.seed

    def terms(self, tokens: list[str]) -> list[str]:
        return sorted(set(tokens) & self.lexicon)

    def parts(self, p) -> dict[str, np.ndarray]:
        t = self.terms(p.tokens)
        return {"imatch": np.array([imatch_key(t)] if len(t) >= self.min_terms else [], dtype=U64)}


class IMatchMulti(IMatch):
    name = "imatch_multi"

    def __init__(self, canonicalizer, context=None):
        super().__init__(canonicalizer, context)
        config = canonicalizer.config
        self.k = setting(config, "imatch_lexicons", 10)
        keep = setting(config, "imatch_keep", 0.67, float)
        if not 1 <= self.k <= 63 or not 0.0 < keep < 1.0:
            raise ValueError(
                "imatch_multi needs 1 <= imatch_lexicons <= 63 and 0 < imatch_keep < 1, "
                f"got {self.k}, {keep}"
            )
        cut = int(keep * 2**64)
        # bit j of member[t] says whether term t is in sub-lexicon j+1 (bit 0 is the main lexicon)
        self.member = {
            t: 1
            | sum(
                1 << (j + 1)
                for j in range(self.k)
                if xxhash.xxh64_intdigest(t.encode(), seed=self.seed * 1000 + j) < cut
            )
            for t in self.lexicon
        }
        self.components = tuple(["main"] + [f"sub{j + 1}" for j in range(self.k)])

    def parts(self, p) -> dict[str, np.ndarray]:
        t = self.terms(p.tokens)
        out = {}
        for j, comp in enumerate(self.components):
            sub = [w for w in t if self.member[w] >> j & 1]
            out[comp] = np.array([imatch_key(sub)] if len(sub) >= self.min_terms else [], dtype=U64)
        return out
