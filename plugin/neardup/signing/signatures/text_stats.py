"""Text statistics: six statistical local signatures of a text (Kosinov, 003), tests on
the raw text after tag removal, no collection data, each hashed with MD5 (first 64 bits
kept), one key per test. Registered as ``text_stats`` (alias ``kosinov``, its name in
indexes built before).

1. ``punct``   counts of the 11 characters . , - _ : ; ! ? ( ) and space, as "c1,...,c11"
               (Persian/Arabic comma, semicolon and question mark count as , ; ?)
2. ``lengths`` for every word length i = 1..L (L = longest word): "i-count_i"
3. ``means``   "[mean word length]-[mean sentence length in words]-[words]-[sentences]"
               (means to two decimals)
4. ``freq``    "[word]-[count]" for each distinct word (case-folded), in alphabetical order
5. ``seq``     the sequence of word lengths, "l1,l2,..."
6. ``all``     the concatenation of the strings of tests 1-5

Extra whitespace is removed first (runs of spaces, tabs and newlines become one space,
003's first preprocessing step). A word is a maximal alphanumeric run; sentences end at
. ! ? and blank lines (counted before the whitespace is collapsed). Two
documents match on a test when its keys are equal; for engine candidates any equal test
makes a candidate (min_match 1), verified exactly afterwards.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...canonical import strip_html
from ...sketches.hashing import U64
from ...keys.signature import Signature
from .common import digest64, sentences, words

PUNCT = (".", ",", "-", "_", ":", ";", "!", "?", "(", ")", " ")
COMPONENTS = ("punct", "lengths", "means", "freq", "seq", "all")
_FOLD = str.maketrans({"\u060c": ",", "\u061b": ";", "\u061f": "?"})


def test_strings(text: str) -> dict[str, str]:
    """The strings of tests 1-6 for a raw (tag-stripped) text."""
    sents = sentences(text)
    text = " ".join(text.split())
    folded = text.translate(_FOLD)
    ws = words(text)
    lens = [len(w) for w in ws]
    per_len = Counter(lens)
    t = {
        "punct": ",".join(str(folded.count(c)) for c in PUNCT),
        "lengths": ",".join(f"{i}-{per_len.get(i, 0)}" for i in range(1, max(lens, default=0) + 1)),
        "means": "{:.2f}-{:.2f}-{}-{}".format(
            sum(lens) / len(ws) if ws else 0.0,
            len(ws) / len(sents) if sents else 0.0,
            len(ws),
            len(sents),
        ),
        "freq": ",".join(f"{w}-{n}" for w, n in sorted(Counter(w.casefold() for w in ws).items())),
        "seq": ",".join(map(str, lens)),
    }
    t["all"] = "|".join(t[c] for c in COMPONENTS[:5])
    return t


class TextStatistics(Signature):
    name = "text_stats"
    components = COMPONENTS

    def __init__(self, canonicalizer, context=None):
        self.strip = canonicalizer.config.strip_html

    def parts(self, p) -> dict[str, np.ndarray]:
        text = strip_html(p.text) if self.strip else p.text
        if not words(text):
            return {c: np.empty(0, dtype=U64) for c in COMPONENTS}
        return {c: np.array([digest64(s, "md5")], dtype=U64) for c, s in test_strings(text).items()}
