"""Word-level comparison of two texts for display: shared passages marked in both.

Matching blocks come from :class:`difflib.SequenceMatcher` (Ratcliff/Obershelp) over word
tokens; runs of at least ``min_run`` shared words are wrapped in ``<mark>``. Every token is
HTML-escaped; whitespace is kept as written (render with ``white-space: pre-wrap``).
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class WordDiff:
    """Two texts rendered as HTML with their shared passages marked."""

    a_html: str
    b_html: str
    shared_words: int
    words_a: int
    words_b: int
    truncated: bool  # a text was longer than ``max_words`` and was cut

    @property
    def shared_share(self) -> float:
        """Share of the second text's words inside shared passages."""
        return self.shared_words / self.words_b if self.words_b else 0.0


def tokens(text: str, max_words: int | None = None) -> tuple[list[str], bool]:
    """Words and runs of whitespace, in order (joined, they give the text back)."""
    toks = _TOKEN.findall(text)
    if max_words is not None:
        words = 0
        for i, t in enumerate(toks):
            if not t.isspace():
                words += 1
                if words > max_words:
                    return toks[:i], True
    return toks, False


def _render(toks: list[str], marked: list[bool]) -> str:
    out: list[str] = []
    open_ = False
    for t, m in zip(toks, marked, strict=True):
        if m and not open_:
            out.append('<mark class="shared">')
            open_ = True
        elif not m and open_:
            out.append("</mark>")
            open_ = False
        out.append(html.escape(t))
    if open_:
        out.append("</mark>")
    return "".join(out)


def word_diff(a: str, b: str, *, min_run: int = 3, max_words: int | None = 2000) -> WordDiff:
    """Mark the passages of at least ``min_run`` words that ``a`` and ``b`` share (in order)."""
    ta, cut_a = tokens(a, max_words)
    tb, cut_b = tokens(b, max_words)
    wa = [t.strip().casefold() for t in ta]
    wb = [t.strip().casefold() for t in tb]
    ma, mb = [False] * len(ta), [False] * len(tb)
    sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    for block in sm.get_matching_blocks():
        words = sum(1 for w in wa[block.a : block.a + block.size] if w)
        if words < min_run:
            continue
        for k in range(block.size):
            ma[block.a + k] = mb[block.b + k] = True
    # whitespace between two marked words belongs to the passage; elsewhere it stays unmarked
    for toks, marks in ((wa, ma), (wb, mb)):
        for i, w in enumerate(toks):
            if not w and marks[i] and not (0 < i < len(toks) - 1 and marks[i - 1] and marks[i + 1]):
                marks[i] = False
    shared = sum(1 for w, m in zip(wb, mb, strict=True) if m and w)
    return WordDiff(_render(ta, ma), _render(tb, mb), shared, sum(1 for w in wa if w), sum(1 for w in wb if w),
                    cut_a or cut_b)
