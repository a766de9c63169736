"""Compiled Persian pass (the "compiled" backend of :func:`.persian.normalize_persian` and of
the punctuation and Persian steps of :class:`.Canonicalizer`): drop_marks, the punctuation step
and the Persian steps as one loop over the characters, many texts a call. The reference form of
each step is the regular expressions of :mod:`.persian` and :mod:`.letters`;
tests/test_canonical_fast.py checks the pass against the steps one by one.

All arithmetic is on uint64 (wrapping, as numpy's) or int64, so the results are the same, bit
for bit, as the formulas they compute. Loaded on first use (:func:`neardup.loops.loops`), in
the compiled or the interpreted form.
"""

from __future__ import annotations

import numpy as np

from ..loops import njit_for

#: numba's ``njit``, or in this module's interpreted twin one that leaves each function as
#: written (:func:`neardup.loops.njit_for`).
njit = njit_for(globals())

#: Bits of the class table of the Persian pass (:func:`neardup.canonical.persian.pass_classes`).
WORD, MARK, ARABIC, OTHER = 1, 2, 4, 8


_ZWNJ, _SPACE, _NONE = 0x200C, 32, -2


@njit(cache=True, nogil=True)
def persian_pieces_many(cps, bounds, classes, letter_map, space, first, second, step, marks, late):
    """The Persian pass over each text ``cps[bounds[d] : bounds[d + 1]]``
    (:func:`neardup.canonical.persian.compiled_steps`): with ``marks``, drop_marks first
    (the ``MARK`` characters of ``classes`` out); then, with ``step``, the punctuation step
    and the Persian step after it (``persian_step(drop_punctuation(text))`` of
    :mod:`neardup.canonical.canonicalizer`): the punctuation step alone where no Arabic
    script is left, the Persian steps (:func:`_stream`) on the whole text where it has no
    Cyrillic or Latin letter, else on each Persian run (:func:`_by_runs`); without ``step``,
    the Persian steps on the text (:func:`neardup.canonical.persian.normalize_persian`);
    then, if ``late`` is not empty, each character through it (the steps after the Persian
    one, :func:`neardup.canonical.letters.late_steps_table`) unless one maps to -1.

    Returns (the outputs end to end, each followed by a space; where each starts and the
    last ends; the status of each): 0 where a character maps to -2 in ``letter_map`` (a step
    this pass does not make applies; the output is then empty), 1 done, 2 done with ``late``."""
    n = len(bounds) - 1
    out = np.empty(len(cps) + len(cps) // 2 + 16, dtype=np.uint32)  # grown as needed
    longest = 0
    for d in range(n):
        longest = max(longest, bounds[d + 1] - bounds[d])
    kept = np.empty(longest, dtype=np.uint32)  # a text without its marks
    at = np.zeros(n + 1, dtype=np.int64)
    status = np.zeros(n, dtype=np.int64)
    k = 0
    for d in range(n):
        src = cps[bounds[d] : bounds[d + 1]]
        if k + 6 * len(src) + 16 > len(
            out
        ):  # (a text comes out at most 4 times as long, 2 more a Persian run)
            out = _grown(out, k, k + 6 * len(src) + 16)
        end, ok = _text_into(
            src, classes, letter_map, space, first, second, step, marks, kept, out, k
        )
        status[d] = np.int64(ok)
        if ok and len(late):
            if _late_in_place(out, k, end, late):
                status[d] = 2
            else:  # (the map stopped part way: the text again)
                end, ok = _text_into(
                    src, classes, letter_map, space, first, second, step, marks, kept, out, k
                )
        k = end if ok else k
        out[k] = (
            _SPACE  # (each text followed by a space: a batch's outputs are token hashed as they lie)
        )
        k += 1
        at[d + 1] = k
    return out[:k], at, status


@njit(cache=True, nogil=True)
def _text_into(src, classes, letter_map, space, first, second, step, marks, kept, out, k):
    """The pass of :func:`persian_pieces_many` over one text, written to ``out`` from ``k``:
    (where it ends, False where a character maps to -2)."""
    acc = 0
    for i in range(len(src)):
        acc |= classes[src[i]]
    if marks and acc & MARK:
        src, acc = _without_marks(src, classes, kept)
    if not step:
        return _stream(src, 0, len(src), False, classes, letter_map, space, first, second, out, k)
    if not acc & ARABIC:
        return _punctuation(src, classes, out, k), True
    if not acc & OTHER:
        return _stream(src, 0, len(src), True, classes, letter_map, space, first, second, out, k)
    return _by_runs(
        _punctuation_of(src, classes), classes, letter_map, space, first, second, out, k
    )


@njit(cache=True, nogil=True)
def _without_marks(src, classes, kept):
    """``src`` without its ``MARK`` characters (written to ``kept``), and the or of the
    classes of those left."""
    m = 0
    acc = 0
    for i in range(len(src)):
        cls = classes[src[i]]
        kept[m] = src[i]
        keep = (cls & MARK) == 0
        acc |= cls * keep
        m += keep
    return kept[:m], acc


@njit(cache=True, nogil=True)
def _late_in_place(out, lo, hi, late):
    """Each ``out[lo:hi]`` through ``late``: True, or False where one maps to -1 (those
    before it are then mapped already)."""
    for i in range(lo, hi):
        v = late[out[i]]
        if v < 0:
            return False
        out[i] = v
    return True


@njit(cache=True, nogil=True)
def _grown(out, used, need):
    """``out`` with room for at least ``need`` values (twice as much), its first ``used`` kept."""
    bigger = np.empty(max(2 * len(out), need), dtype=out.dtype)
    bigger[:used] = out[:used]
    return bigger


@njit(cache=True, nogil=True, inline="always")
def _in(c, lo, hi):
    return lo <= c <= hi


@njit(cache=True, nogil=True, inline="always")
def _persian_letter(c):
    """The Arabic-script class of :data:`neardup.canonical.scripts._FA_RUN`."""
    return (
        _in(c, 0x600, 0x6FF)
        or _in(c, 0x750, 0x77F)
        or _in(c, 0xFB50, 0xFDFF)
        or _in(c, 0xFE70, 0xFEFF)
    )


@njit(cache=True, nogil=True, inline="always")
def _other_letter(c):
    """The Cyrillic and Latin class of :data:`neardup.canonical.scripts._OTHER_LETTER`."""
    return _in(c, 0x400, 0x52F) or _in(c, 65, 90) or _in(c, 97, 122) or _in(c, 0xC0, 0x24F)


@njit(cache=True, nogil=True, inline="always")
def _run_end(a, i):
    """Where the run of ``a[i]`` that starts at ``i`` ends."""
    j = i + 1
    while j < len(a) and a[j] == a[i]:
        j += 1
    return j


@njit(cache=True, nogil=True)
def _punctuation(src, classes, out, k):
    """The punctuation step (:func:`neardup.canonical.letters.drop_punctuation`, its pattern
    ``_PUNCT``) of ``src``, written to ``out`` from ``k``; returns where it ends. Each run of
    characters neither ``WORD`` (``\\w``) nor ZWNJ, each run of underscores, and each run of
    ZWNJ not between two Arabic-block characters (U+0600..U+06FF) to a space; of a run of
    n >= 2 ZWNJ between two such characters, the first n - 1 and the last each to a space
    (the pattern's backtracking); a word character as it is."""
    n = len(src)
    i = 0
    while i < n:
        c = src[i]
        j = i + 1
        if c == _ZWNJ:
            j = _run_end(src, i)
            if i > 0 and _in(src[i - 1], 0x600, 0x6FF) and j < n and _in(src[j], 0x600, 0x6FF):
                if j - i == 1:
                    out[k] = c
                else:
                    out[k] = _SPACE
                    out[k + 1] = _SPACE
                    k += 1
            else:
                out[k] = _SPACE
        elif c == 95:
            j = _run_end(src, i)
            out[k] = _SPACE
        elif not classes[c] & WORD:
            while j < n and src[j] != _ZWNJ and src[j] != 95 and not classes[src[j]] & WORD:
                j += 1
            out[k] = _SPACE
        else:
            out[k] = c
        k += 1
        i = j
    return k


@njit(cache=True, nogil=True)
def _punctuation_of(src, classes):
    """The punctuation step of ``src`` as a new array."""
    out = np.empty(len(src) + 1, dtype=np.uint32)
    return out[: _punctuation(src, classes, out, 0)]


@njit(cache=True, nogil=True)
def _by_runs(p, classes, letter_map, space, first, second, out, k):
    """The Persian steps (:func:`_stream`) on each Persian run of ``p`` (from an
    Arabic-script character to the last one before a Cyrillic or Latin letter), the rest as
    it is (:func:`neardup.canonical.scripts.map_persian_runs`), written to ``out`` from
    ``k``: (where it ends, False where a character maps to -2)."""
    n = len(p)
    i = 0
    while i < n:
        if not _persian_letter(p[i]):
            out[k] = p[i]
            k += 1
            i += 1
            continue
        last = i
        j = i
        while j < n and not _other_letter(p[j]):
            if _persian_letter(p[j]):
                last = j
            j += 1
        k, ok = _stream(p, i, last + 1, False, classes, letter_map, space, first, second, out, k)
        if not ok:
            return k, False
        i = last + 1
    return k, True


@njit(cache=True, nogil=True)
def _stream(src, lo, hi, punct, classes, letter_map, space, first, second, out, k):
    """:func:`neardup.canonical.persian.normalize_persian` of ``src[lo:hi]`` (after the
    punctuation step, :func:`_punctuation`, with ``punct``; then ``lo`` is 0 and ``hi`` the
    end), written to ``out`` from ``k``: (where it ends, False where a character maps to -2
    in ``letter_map``).

    Its steps, each on the output of the one before:

    1. each run of ``space`` characters one space; each character ``c`` then
       ``letter_map[c]`` (-1: dropped; -2: stop);
    2. each run of ZWNJ dropped between two Arabic-block characters (U+0600..U+06FF), else
       a space for each;
    3. a space on both sides of each run of Persian digits (U+06F0..U+06F9);
    4. each run of spaces between two letters U+0621..U+06D5 dropped;
    5. each run of one such letter three times or more cut to two;
    6. a space before each character that is a ``first`` anchor letter followed by a
       ``second`` one (bool arrays indexed up to U+0700, which stands for any above; no
       space in either).

    They run as one loop: each character of the input goes through them in turn as "s
    spaces, then the character c" (c -2 where there are only spaces), each step holding what
    it must see the next character to decide (ZWNJ and spaces held, the character before
    them, whether digits run, the letter repeated, the character an anchor space may go
    before), and letting it out at the end."""
    was_space = False  # step 1: the character before was a space character
    zwnj, before_zwnj = 0, np.int64(-1)  # step 2: ZWNJ held, the character before them
    in_digits = False  # step 3
    spaces, before_spaces = 0, np.int64(-1)  # step 4: spaces held, the character before them
    prev, run = np.int64(-1), 0  # step 5: the character before, how many times in a row
    held = np.int64(-1)  # step 6: the character waiting for the next one
    n = len(src)
    i = lo
    while i < hi:
        x = np.int64(src[i])
        i += 1
        if punct:  # the punctuation step, as :func:`_punctuation` (one space where it makes two: step 1 keeps one)
            if x == _ZWNJ or x == 95:
                j = _run_end(src, i - 1)
                kept = (
                    x == _ZWNJ
                    and j == i
                    and i - 1 > lo
                    and j < n
                    and _in(src[i - 2], 0x600, 0x6FF)
                    and _in(src[j], 0x600, 0x6FF)
                )
                x = x if kept else np.int64(_SPACE)
                i = j
            elif not classes[x] & WORD:
                while i < n and src[i] != _ZWNJ and src[i] != 95 and not classes[src[i]] & WORD:
                    i += 1
                x = np.int64(_SPACE)
        sp = space[x]  # step 1
        if sp and was_space:
            continue
        was_space = sp
        c = np.int64(_SPACE) if sp else np.int64(letter_map[x]) if x < 0x10000 else x
        if c == -2:
            return k, False
        if c == -1:
            continue
        s = np.int64(c == _SPACE)
        c = np.int64(_NONE) if s else c
        if not s and c == _ZWNJ:  # step 2
            zwnj += 1
            continue
        s += zwnj * np.int64(s > 0 or not (_in(before_zwnj, 0x600, 0x6FF) and _in(c, 0x600, 0x6FF)))
        zwnj = 0
        before_zwnj = c if c >= 0 else np.int64(_SPACE)
        ends = s > 0 and in_digits  # step 3
        s += np.int64(ends)
        in_digits = in_digits and not ends
        digit = c >= 0 and _in(c, 0x6F0, 0x6F9)
        s += np.int64(c >= 0 and digit != in_digits)
        in_digits = digit if c >= 0 else in_digits
        spaces += s  # step 4
        if c < 0:
            continue
        s = (
            0
            if spaces
            and before_spaces >= 0
            and _in(before_spaces, 0x621, 0x6D5)
            and _in(c, 0x621, 0x6D5)
            else spaces
        )
        spaces = 0
        before_spaces = c
        prev, run = (np.int64(_SPACE), s) if s else (prev, run)  # step 5
        run = run + 1 if c == prev else 1
        prev = c
        cut = run > 2 and _in(c, 0x621, 0x6D5)
        if cut and not s:
            continue
        c = np.int64(_NONE) if cut else c
        if held >= 0:  # step 6 (branch-free: anchors are frequent)
            nxt = np.int64(_SPACE) if s else c
            out[k] = _SPACE
            k += np.int64(first[min(held, 0x700)] & second[min(max(nxt, 0), 0x700)])
            out[k] = held
            k += 1
        for _ in range(s):
            out[k] = _SPACE
            k += 1
        held = c if c >= 0 else np.int64(-1)
    s = zwnj + np.int64(in_digits) + spaces  # the end: what each step holds
    out[k] = held
    k += np.int64(held >= 0)
    for _ in range(s):
        out[k] = _SPACE
        k += 1
    return k, True
