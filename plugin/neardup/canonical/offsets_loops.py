"""The loop of :mod:`neardup.canonical.offsets`: each canonical token of a text found in turn
in the stream of its piece tokens (:func:`.offsets.align`), checked against
:func:`.offsets.align_reference` in tests/test_languages.py.

This module is its interpreted form, the statement of the loop; the C module
``_offsets_loops`` beside it is its compiled form, built at install
(:mod:`neardup.sketches.loops` chooses). Where the compiled form does not run,
:func:`.offsets.align` runs its own loop over the strings (faster than this one over code
points); tests/test_loops.py checks that both forms of this one give the same values.
"""

from __future__ import annotations

import numpy as np


def find_tokens(stream, at, words, word_at, window):
    """(found, cursor), an int64 each per word ``words[word_at[i] : word_at[i + 1]]`` (code
    points), in order: where in ``stream`` (code points; ``at``: where each piece token
    starts in it, increasing) the word is found from the cursor, by the rule of
    :func:`.offsets._find` (where the stream continues with it at the cursor, else its first
    occurrence that starts a piece token among those ending within ``window`` + its length
    of the cursor, else its first occurrence there; -1 for none, and for an empty word),
    and the cursor it is looked for from (0, then the end of the last word found).

    >>> cp = lambda s: np.array([ord(c) for c in s], dtype=np.uint32)
    >>> found, cursor = find_tokens(cp("thecatsat"), np.array([0, 3, 6]), cp("catsatdog"),
    ...                             np.array([0, 3, 6, 9]), 400)
    >>> found.tolist(), cursor.tolist()
    ([3, 6, -1], [0, 6, 9])
    """
    n_words, size = len(word_at) - 1, len(stream)
    found = np.full(n_words, -1, dtype=np.int64)
    looked_from = np.zeros(n_words, dtype=np.int64)
    cursor = 0
    for i in range(n_words):
        t = words[word_at[i] : word_at[i + 1]]
        n = len(t)
        looked_from[i] = cursor
        if n == 0:
            continue
        if cursor + n <= size and (stream[cursor : cursor + n] == t).all():
            a = cursor
        else:
            a = _in_window(stream, at, t, cursor, window)
        found[i] = a
        if a >= 0:
            cursor = a + n
    return found, looked_from


def _in_window(stream, at, t, cursor, window):
    """Where word ``t`` first occurs in ``stream`` from ``cursor`` within ``window`` + its
    length, preferring an occurrence that starts a piece token (``at``); -1 for none."""
    n, size, n_parts = len(t), len(stream), len(at)
    first = -1
    j = int(np.searchsorted(at, cursor))  # the first piece token from the cursor on
    for p in range(cursor, min(size, cursor + window + n) - n + 1):
        if (stream[p : p + n] == t).all():
            first = p if first < 0 else first
            while j < n_parts and at[j] < p:
                j += 1
            if j < n_parts and at[j] == p:
                return p
    return first
