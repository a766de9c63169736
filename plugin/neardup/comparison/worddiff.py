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
    ma, mb = _shared_runs(wa, wb, min_run)
    # whitespace between two marked words belongs to the passage; elsewhere it stays unmarked
    for toks, marks in ((wa, ma), (wb, mb)):
        _unmark_loose_space(toks, marks)
    shared = sum(1 for w, m in zip(wb, mb, strict=True) if m and w)
    return WordDiff(
        a_html=_render(ta, ma),
        b_html=_render(tb, mb),
        shared_words=shared,
        words_a=_word_count(wa),
        words_b=_word_count(wb),
        truncated=cut_a or cut_b,
    )


def _word_count(toks: list[str]) -> int:
    """The words among ``toks`` (``""``: whitespace)."""
    return sum(1 for w in toks if w)


def _shared_runs(wa: list[str], wb: list[str], min_run: int) -> tuple[list[bool], list[bool]]:
    """Per token of each text: whether it is in a run the texts share (in order) of at
    least ``min_run`` words (``""``: whitespace, no word)."""
    ma, mb = [False] * len(wa), [False] * len(wb)
    sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    for block in sm.get_matching_blocks():
        if _word_count(wa[block.a : block.a + block.size]) < min_run:
            continue
        for k in range(block.size):
            ma[block.a + k] = mb[block.b + k] = True
    return ma, mb


def _unmark_loose_space(toks: list[str], marks: list[bool]) -> None:
    """Whitespace marked but not between two marked tokens unmarked."""
    for i, w in enumerate(toks):
        if not w and marks[i] and not (0 < i < len(toks) - 1 and marks[i - 1] and marks[i + 1]):
            marks[i] = False


@dataclass(frozen=True)
class WordChanges:
    """What changed from one text to another, word by word: ``html`` is the second text's
    words in order, with the words only the first has as ``<del>`` and the words only the
    second has as ``<ins>``; unchanged runs longer than twice ``context`` words are shortened
    to their ends (``<span class="same">``, saying how many words are left out)."""

    html: str
    added: int  # words only the second text has
    removed: int  # words only the first text has
    truncated: bool  # a text was longer than ``max_words`` and was cut

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed)


def _same_run(words: list[str], context: int, at_start: bool, at_end: bool) -> str:
    """An unchanged run of words, shortened to ``context`` words beside each change."""
    keep_head = 0 if at_start else context
    keep_tail = 0 if at_end else context
    if len(words) <= keep_head + keep_tail + 1 or (at_start and at_end):
        return html.escape(" ".join(words))
    left = len(words) - keep_head - keep_tail
    gap = f'<span class="same">… {left:,} unchanged word{"s" if left != 1 else ""} …</span>'
    return " ".join(
        x
        for x in (
            html.escape(" ".join(words[:keep_head])),
            gap,
            html.escape(" ".join(words[len(words) - keep_tail :])),
        )
        if x
    )


def word_changes(a: str, b: str, *, context: int = 8, max_words: int | None = 2000) -> WordChanges:
    """The word diff from ``a`` to ``b`` (:class:`difflib.SequenceMatcher` over the words,
    compared case-folded; whitespace is not a change).

    >>> c = word_changes("The cat sat on the mat.", "The dog sat on the mat.")
    >>> c.html, c.added, c.removed
    ('The <del>cat</del> <ins>dog</ins> sat on the mat.', 1, 1)
    >>> word_changes("a b c", "A  b\\nc").unchanged
    True
    >>> forty, thirty_nine = (" ".join(map(str, range(n))) for n in (40, 39))
    >>> word_changes(forty, thirty_nine + " x", context=2).html
    '<span class="same">… 37 unchanged words …</span> 37 38 <del>39</del> <ins>x</ins>'
    """
    ta, cut_a = tokens(a, max_words)
    tb, cut_b = tokens(b, max_words)
    wa = [t for t in ta if not t.isspace()]
    wb = [t for t in tb if not t.isspace()]
    sm = difflib.SequenceMatcher(
        None, [w.casefold() for w in wa], [w.casefold() for w in wb], autojunk=False
    )
    out, added, removed = _changes(sm.get_opcodes(), wa, wb, context)
    return WordChanges(
        html=" ".join(x for x in out if x), added=added, removed=removed, truncated=cut_a or cut_b
    )


def _changes(
    opcodes: list[tuple[str, int, int, int, int]], wa: list[str], wb: list[str], context: int
) -> tuple[list[str], int, int]:
    """The pieces of :func:`word_changes`' HTML for ``opcodes`` (of
    :meth:`difflib.SequenceMatcher.get_opcodes` over ``wa`` and ``wb``), and the words added
    and removed."""
    out: list[str] = []
    added = removed = 0
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            out.append(_same_run(wb[j1:j2], context, at_start=j1 == 0, at_end=j2 == len(wb)))
            continue
        if i2 > i1:
            out.append(f"<del>{html.escape(' '.join(wa[i1:i2]))}</del>")
            removed += i2 - i1
        if j2 > j1:
            out.append(f"<ins>{html.escape(' '.join(wb[j1:j2]))}</ins>")
            added += j2 - j1
    return out, added, removed
