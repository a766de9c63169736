"""Descriptive words: signatures for full duplicates from a document's most telling words
and sentences (Sharapova, 001; after Zelenkov & Segalovich 2007 and Ilyinsky et al. 2002),
one component each, stored together as one positional key set. Registered as
``descriptive_words`` (alias ``sharapova``, its name in indexes built before):

* ``crc32``    CRC32 of the canonical token stream (the plain checksum of the text)
* ``tf``       CRC32 of the ``sharapova_top`` (6) most frequent words, sorted alphabetically
* ``tfidf``    the same with weight tf*idf
* ``tfridf``   the same with weight tf*ridf (residual idf)
* ``tfidfopt`` the same with weight tf*idf_opt (idf around an optimal frequency)
* ``long2``    CRC32 of the two longest sentences (most words), in alphabetical order
* ``heavy2``   CRC32 of the two heaviest sentences (sum of tf*idf of their words), sorted
* ``support``  the binary support-word vector: bit i = 1 iff tf(support word i) >=
  ``support_min_tf`` (1); support words are the ``support_size`` (4000) terms of highest df
  whose nidf >= 0.1. Vectors are compared by Hamming distance; for term match the bits
  are dealt round-robin into ``support_k`` + 1 (4) blocks and each non-zero block gives a
  key, so two vectors within Hamming distance ``support_k`` share a block (pigeonhole)
  unless that block is all zeros in both.

Weights are defined in :mod:`.stats`; ties are broken alphabetically. Words are the
canonical tokens; sentences are cut from the tag-stripped text at . ! ? and blank
lines, then each is canonicalized. Documents match when any component agrees (a set of signatures
beats any single one, 001).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import xxhash

from ...canonical import Canonicalizer, strip_html
from ...sketches.hashing import U64
from ...keys.signature import Signature
from .common import digest64, sentences, setting, words
from .stats import Stats

COMPONENTS = ("crc32", "tf", "tfidf", "tfridf", "tfidfopt", "long2", "heavy2", "support")


def top_words(tf: Counter, weight, n: int) -> list[str]:
    """The n words of highest tf * weight(word) (ties: alphabetical), sorted alphabetically."""
    ranked = sorted(tf, key=lambda w: (-tf[w] * weight(w), w))
    return sorted(ranked[:n])


def crc_of(items: list[str]) -> np.ndarray:
    return np.array([digest64(" ".join(items), "crc32")] if items else [], dtype=U64)


def block_keys(bits: np.ndarray, blocks: int) -> np.ndarray:
    """Keys of the non-zero round-robin blocks of a bit vector (xxh64 seeded by block)."""
    out = []
    for b in range(blocks):
        blk = np.asarray(bits[b::blocks], dtype=np.uint8)
        if blk.any():
            out.append(xxhash.xxh64_intdigest(np.packbits(blk).tobytes(), seed=b))
    return np.array(out, dtype=U64)


class DescriptiveWords(Signature):
    name = "descriptive_words"
    components = COMPONENTS

    def __init__(self, canonicalizer: Canonicalizer, context=None):
        config = canonicalizer.config
        self.stats = Stats(context or {}, config, self.name)
        self.canon = canonicalizer
        self.strip = config.strip_html
        self.top = setting(config, "sharapova_top", 6)
        self.min_tf = setting(config, "support_min_tf", 1)
        self.blocks = setting(config, "support_k", 3) + 1
        size = setting(config, "support_size", 4000)
        st = self.stats
        ranked = sorted((t for t in st.df if st.nidf(t) >= 0.1), key=lambda t: (-st.df[t], t))
        self.support = sorted(ranked[:size])
        self.support_index = {t: i for i, t in enumerate(self.support)}

    def support_vector(self, tokens: list[str]) -> np.ndarray:
        bits = np.zeros(len(self.support), dtype=bool)
        for w, n in Counter(tokens).items():
            i = self.support_index.get(w)
            if i is not None and n >= self.min_tf:
                bits[i] = True
        return bits

    def parts(self, p) -> dict[str, np.ndarray]:
        st = self.stats
        tf = Counter(p.tokens)
        raw = strip_html(p.text) if self.strip else p.text
        sents = [words(self.canon.text(s)) for s in sentences(raw)]
        sents = [s for s in sents if s]
        joined = [" ".join(s) for s in sents]
        longest = _two_first(joined, lambda i: -len(sents[i]))
        heavy = _two_first(joined, lambda i: -sum(tf.get(w, 0) * st.idf(w) for w in sents[i]))
        return {
            "crc32": crc_of(p.tokens),
            "tf": crc_of(top_words(tf, lambda w: 1.0, self.top)),
            "tfidf": crc_of(top_words(tf, st.idf, self.top)),
            "tfridf": crc_of(top_words(tf, st.ridf, self.top)),
            "tfidfopt": crc_of(top_words(tf, st.idf_opt, self.top)),
            "long2": crc_of([joined[i] for i in longest]),  # (none: crc_of([]))
            "heavy2": crc_of([joined[i] for i in heavy]),
            "support": block_keys(self.support_vector(p.tokens), self.blocks),
        }


def _two_first(joined: list[str], rank) -> list[int]:
    """The two sentences first by ``rank`` (ties: by their text), in the order of their
    text."""
    first = sorted(range(len(joined)), key=lambda i: (rank(i), joined[i]))[:2]
    return sorted(first, key=lambda i: joined[i])
