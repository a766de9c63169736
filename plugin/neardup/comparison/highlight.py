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

from ..canonical.canonicalizer import Canonical, Canonicalizer
from ..canonical.offsets import token_spans
from ..sketches.hashing import U64, hash_strings
from ..sketches.shingles import char_units, combine
from .worddiff import WordDiff

_WORD = re.compile(r"\S+")


def shingle_spans(
    text: str,
    canonicalizer: Canonicalizer,
    lang: str | None = None,
    canonical: Canonical | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The shingle hashes of ``text`` in document order (those the signer stores) and the raw
    span of each, as an (n, 2) array of (start, end); ``canonical``: the text's canonical
    tokens and language, where the caller made them."""
    config = canonicalizer.config
    words, starts, ends, doc_lang = token_spans(text, canonicalizer, lang, canonical)
    if not words:
        return np.empty(0, dtype=U64), np.empty((0, 2), dtype=np.int64)
    tok_start, tok_end = np.frombuffer(starts, dtype=np.int64), np.frombuffer(ends, dtype=np.int64)
    w = config.shingle_size_for(doc_lang)
    if config.shingle == "char":
        units = char_units(words, config.seed)
        owner = np.repeat(np.arange(len(words)), [len(x) + 1 for x in words])[
            : len(units)
        ]  # the space after a token is its own
    else:
        units = hash_strings(words, config.seed)
        owner = np.arange(len(words))
    del words
    seq = combine(units, w)
    width = min(w, len(units))
    first, last = owner[: len(seq)], owner[width - 1 : width - 1 + len(seq)]
    spans = np.empty((len(seq), 2), dtype=np.int64)
    # text before the first token goes with its shingle
    spans[:, 0] = np.where(first == 0, 0, tok_start[first])
    spans[:, 1] = np.where(last == len(tok_end) - 1, len(text), tok_end[last])  # and after the last
    return seq, spans


def shared_spans(
    text: str,
    canonicalizer: Canonicalizer,
    other: np.ndarray,
    lang: str | None = None,
    canonical: Canonical | None = None,
) -> list[tuple[int, int]]:
    """Merged raw spans of the shingles of ``text`` whose hashes are in ``other`` (sorted or
    not); ``canonical``: as in :func:`shingle_spans`."""
    seq, spans = shingle_spans(text, canonicalizer, lang, canonical)
    return merge(spans[np.isin(seq, other)])


def merge(spans: np.ndarray | list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans merged, in order; empty ones dropped.

    >>> merge([(5, 9), (0, 3), (2, 4), (9, 9), (9, 12), (20, 20)])
    [(0, 4), (5, 12)]
    """
    a = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    if not len(a):
        return []
    a = a[np.lexsort((a[:, 1], a[:, 0]))]
    reach = np.maximum.accumulate(a[:, 1])
    # a span opens a new run where it starts past everything before it reaches
    new = np.ones(len(a), dtype=bool)
    new[1:] = a[1:, 0] > reach[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(a)) - 1
    out = np.stack([a[starts, 0], reach[ends]], axis=1)
    return [(int(s), int(e)) for s, e in out if e > s]


def render(
    text: str, spans: list[tuple[int, int]], max_words: int | None = None
) -> tuple[str, int, int, bool]:
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


def shared_passages(
    a: str,
    b: str,
    canonicalizer: Canonicalizer,
    lang_a: str | None = None,
    lang_b: str | None = None,
    max_words: int | None = 2000,
    shingles_a: np.ndarray | None = None,
    shingles_b: np.ndarray | None = None,
) -> WordDiff:
    """Both texts rendered with the passages behind their shared shingles marked (the
    :class:`~neardup.comparison.worddiff.WordDiff` of the report). ``shingles_a`` /
    ``shingles_b``: the texts' shingle hashes as stored (made here when not given). Only the first
    ``max_words`` words of each are spanned (and a margin, so every shown word's shingles
    are whole): memory follows what is shown, not the length of the texts."""
    config = canonicalizer.config
    set_a = shingles_a if shingles_a is not None else shingle_spans(a, canonicalizer, lang_a)[0]
    set_b = shingles_b if shingles_b is not None else shingle_spans(b, canonicalizer, lang_b)[0]
    # (a shingle's tokens can lie farther apart than its width in words: stop words between
    # them are dropped, compounds written apart are one token)
    margin = max(200, 4 * max(config.shingle_size_for(lang) for lang in ("fa", "ru", "en", None)))
    ma = _marked(_prefix(a, max_words, margin), canonicalizer, lang_a, set_b)
    mb = _marked(_prefix(b, max_words, margin), canonicalizer, lang_b, set_a)
    html_a, _, words_a, cut_a = render(a, ma, max_words)
    html_b, shared_b, words_b, cut_b = render(b, mb, max_words)
    return WordDiff(
        a_html=html_a,
        b_html=html_b,
        shared_words=shared_b,
        words_a=words_a,
        words_b=words_b,
        truncated=cut_a or cut_b,
    )


def _prefix(text: str, max_words: int | None, margin: int) -> str:
    """``text`` up to the end of its word ``max_words + margin`` (all of it for None).

    >>> _prefix("a bb  c d", 1, 1)
    'a bb'
    """
    if max_words is None:
        return text
    end = len(text)
    for k, m in enumerate(_WORD.finditer(text)):
        if k + 1 == max_words + margin:
            end = m.end()
            break
    return text[:end]


def _marked(
    text: str, canonicalizer: Canonicalizer, lang: str | None, other: np.ndarray
) -> list[tuple[int, int]]:
    """Merged raw spans of the shingles of ``text`` that are in ``other``."""
    seq, spans = shingle_spans(text, canonicalizer, lang)
    return merge(spans[np.isin(seq, other)])


def shared_passage_texts(
    a: str,
    b: str,
    canonicalizer: Canonicalizer,
    lang_a: str | None = None,
    lang_b: str | None = None,
    *,
    shingles_b: np.ndarray | None = None,
    canonical_a: Canonical | None = None,
) -> list[str]:
    """The raw passages of ``a`` behind the shingles it shares with ``b``, in order, with
    their whitespace collapsed (what ``neardup compare`` can show instead of canonical
    shingles, which for Persian are anchor pieces). ``shingles_b``: ``b``'s shingle hashes
    where the caller has them (a signed document's ``shingles``), so that only ``a`` is
    mapped back to its raw text; ``canonical_a``: ``a``'s canonical tokens and language,
    where the caller made them."""
    if shingles_b is None:
        shingles_b = np.unique(shingle_spans(b, canonicalizer, lang_b)[0])
    spans = shared_spans(a, canonicalizer, shingles_b, lang_a, canonical_a)
    return [" ".join(a[s:e].split()) for s, e in spans]
