"""Anchor-based shingle boundaries (004, Yandex "Spamooborona"): shingles start at
content-defined points, so an edit moves only the boundaries near it.

004 quotes the rule: shingles run "from letter yu to letter yu; or from a two-letter
sequence whose character values sum to a multiple of 50, to the next such one".
Implemented on the canonical text (canonical tokens joined by single spaces):

* position i is an anchor when characters i and i+1 are both letters and
  ord(c_i) + ord(c_{i+1}) = 0 (mod ``anchor_modulus``, 50) -- Unicode code points -- or
  when c_i is one of ``anchor_letters`` (default none; "ю" gives 004's first rule);
* a shingle is the text from one anchor up to (not including) the next anchor, or to
  the end of the text; the text before the first anchor belongs to no shingle;
* a text without anchors has one shingle, the whole text (so short texts still match
  their copies).

Keys: xxh64 of each distinct shingle's UTF-8 bytes (seeded with ``Config.seed``).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import xxhash

from ...sketches.hashing import U64
from ...keys.signature import Signature
from .common import setting


def anchor_positions(text: str, modulus: int = 50, letters: str = "") -> np.ndarray:
    """Start positions of anchors in ``text`` (see the module docstring)."""
    if len(text) < 1:
        return np.empty(0, dtype=np.intp)
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    alpha = np.fromiter((c.isalpha() for c in text), dtype=bool, count=len(text))
    hit = np.zeros(len(text), dtype=bool)
    hit[:-1] = alpha[:-1] & alpha[1:] & ((cps[:-1] + cps[1:]) % modulus == 0)
    if letters:
        hit |= np.isin(
            cps, np.frombuffer(letters.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        )
    return np.flatnonzero(hit)


def anchor_shingles(text: str, modulus: int = 50, letters: str = "") -> list[str]:
    """The anchor-started shingles of ``text``, in order."""
    pos = anchor_positions(text, modulus, letters)
    if len(pos) == 0:
        return [text] if text else []
    bounds = list(pos) + [len(text)]
    return [text[a:b].strip() for a, b in pairwise(bounds)]


class Anchor(Signature):
    name = "anchor"
    components = ("anchor",)
    set_like = True

    def __init__(self, canonicalizer, context=None):
        config = canonicalizer.config
        self.modulus = setting(config, "anchor_modulus", 50)
        self.letters = setting(config, "anchor_letters", "", str)
        if self.modulus < 2:
            raise ValueError(f"anchor_modulus must be >= 2, not {self.modulus}")
        self.seed = config.seed

    def parts(self, p) -> dict[str, np.ndarray]:
        sh = anchor_shingles(" ".join(p.tokens), self.modulus, self.letters)
        keys = {xxhash.xxh64_intdigest(s.encode("utf-8"), seed=self.seed) for s in sh if s}
        return {"anchor": np.array(sorted(keys), dtype=U64)}
