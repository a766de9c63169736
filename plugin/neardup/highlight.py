"""Shared passages marked on the raw text: the raw character spans behind shared shingles.

A literal word match on the raw text misses what canonicalization makes equal (Arabic and
Persian letter forms, digits, diacritics, ZWNJ written as a space or left out, case, ё), so
a copy with resemblance 1.0 could show a third of its text marked. Here each canonical
token keeps the raw span it comes from (:func:`neardup.canonical.tokens_with_offsets`),
each shingle spans its first to its last token, and a passage is marked where its shingles
are shared by the other text: exactly what the resemblance counts. Text that
canonicalization drops (stop words, punctuation, tags) is marked when it lies between
tokens of shared shingles, or before the first (after the last) token when that token's
shingle is shared.
"""

from __future__ import annotations

import html
import re

import numpy as np

from .canonical import tokens_with_offsets
from .config import Config
from .hashing import U64, hash_strings
from .shingles import char_units, combine
from .worddiff import WordDiff

_WORD = re.compile(r"\S+")


def shingle_spans(text: str, config: Config, lang: str | None = None) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The shingle hashes of ``text`` in document order (those the signer stores) and the raw
    span of each."""
    toks, doc_lang = tokens_with_offsets(text, config, lang)
    if not toks:
        return np.empty(0, dtype=U64), []
    words = [t.text for t in toks]
    w = config.shingle_size_for(doc_lang)
    if config.shingle == "char":
        units = char_units(words, config.seed)
        owner = np.repeat(np.arange(len(words)), [len(x) + 1 for x in words])[: len(units)]  # the space after a token is its own
    else:
        units = hash_strings(words, config.seed)
        owner = np.arange(len(words))
    seq = combine(units, w)
    width = min(w, len(units))
    spans = []
    for i in range(len(seq)):
        first, last = int(owner[i]), int(owner[i + width - 1])
        start = 0 if first == 0 else toks[first].start
        end = len(text) if last == len(toks) - 1 else toks[last].end
        spans.append((start, end))
    return seq, spans


def shared_spans(text: str, config: Config, other: np.ndarray, lang: str | None = None) -> list[tuple[int, int]]:
    """Merged raw spans of the shingles of ``text`` whose hashes are in ``other`` (sorted or not)."""
    seq, spans = shingle_spans(text, config, lang)
    return merge([s for s, keep in zip(spans, np.isin(seq, other), strict=True) if keep])


def merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        elif e > s:
            out.append((s, e))
    return out


def render(text: str, spans: list[tuple[int, int]], max_words: int | None = None) -> tuple[str, int, int, bool]:
    """HTML of ``text`` with ``spans`` in ``<mark class="shared">`` (cut after ``max_words``
    words); returns the HTML, the words wholly inside marks, the words, and whether it was cut."""
    words = list(_WORD.finditer(text))
    cut = max_words is not None and len(words) > max_words
    if cut:
        words = words[:max_words]
        text = text[: words[-1].end()]
    out, at = [], 0
    for s, e in spans:
        s, e = min(s, len(text)), min(e, len(text))
        if e <= s:
            continue
        out.append(html.escape(text[at:s]))
        out.append(f'<mark class="shared">{html.escape(text[s:e])}</mark>')
        at = e
    out.append(html.escape(text[at:]))
    shared, k = 0, 0
    for m in words:
        while k < len(spans) and spans[k][1] < m.end():
            k += 1
        if k < len(spans) and spans[k][0] <= m.start():
            shared += 1
    return "".join(out), shared, len(words), cut


def shared_passages(a: str, b: str, config: Config, lang_a: str | None = None, lang_b: str | None = None,
                    max_words: int | None = 2000) -> WordDiff:
    """Both texts rendered with the passages behind their shared shingles marked (the
    :class:`~neardup.worddiff.WordDiff` of the report)."""
    seq_a, spans_a = shingle_spans(a, config, lang_a)
    seq_b, spans_b = shingle_spans(b, config, lang_b)
    shared = np.intersect1d(seq_a, seq_b)
    ma = merge([s for s, k in zip(spans_a, np.isin(seq_a, shared), strict=True) if k])
    mb = merge([s for s, k in zip(spans_b, np.isin(seq_b, shared), strict=True) if k])
    html_a, _, words_a, cut_a = render(a, ma, max_words)
    html_b, shared_b, words_b, cut_b = render(b, mb, max_words)
    return WordDiff(html_a, html_b, shared_b, words_a, words_b, cut_a or cut_b)


def shared_passage_texts(a: str, b: str, config: Config, lang_a: str | None = None, lang_b: str | None = None) -> list[str]:
    """The raw passages of ``a`` behind the shingles it shares with ``b``, in order, with
    their whitespace collapsed (what ``neardup compare`` can show instead of canonical
    shingles, which for Persian are anchor pieces)."""
    seq_b, _ = shingle_spans(b, config, lang_b)
    return [" ".join(a[s:e].split()) for s, e in shared_spans(a, config, np.unique(seq_b), lang_a)]
