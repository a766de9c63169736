"""The Persian pass (the "compiled" backend of :func:`.persian.normalize_persian` and of
the punctuation and Persian steps of :class:`.Canonicalizer`): drop_marks, the punctuation step
and the Persian steps as one loop over the characters, many texts a call. The reference form of
each step is the regular expressions of :mod:`.persian` and :mod:`.letters`;
tests/test_canonical_fast.py checks the pass against the steps one by one.

This module is their interpreted form, the statement of each loop; the C module ``_persian_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np

from .ranges import ARABIC_BLOCK, FA_SCRIPT, OTHER_LETTERS, PERSIAN_DIGITS, PERSIAN_LETTERS

#: Bits of the class table of the Persian pass (:func:`neardup.canonical.persian._pass_classes`).
WORD, MARK, ARABIC, OTHER = 1, 2, 4, 8


_ZWNJ, _SPACE, _NONE = 0x200C, 32, -2
#: :mod:`.ranges`, constants of the compiled loops.
_AB, _FA, _DIGIT = ARABIC_BLOCK, PERSIAN_LETTERS, PERSIAN_DIGITS


def persian_pieces_many(cps, bounds, classes, letter_map, space, first, second, step, marks, late):
    """The Persian pass over each text ``cps[bounds[d] : bounds[d + 1]]``
    (:func:`neardup.canonical.persian._compiled`): with ``marks``, drop_marks first
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
        need = k + 6 * len(src) + 16  # (a text comes out at most 4 times as long, 2 more a run)
        if need > len(out):
            out = _grown(out, k, need)
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
        out[k] = _SPACE  # (each text followed by a space: the outputs are token hashed as they lie)
        k += 1
        at[d + 1] = k
    return out[:k], at, status


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


def _late_in_place(out, lo, hi, late):
    """Each ``out[lo:hi]`` through ``late``: True, or False where one maps to -1 (those
    before it are then mapped already)."""
    for i in range(lo, hi):
        v = late[out[i]]
        if v < 0:
            return False
        out[i] = v
    return True


def _grown(out, used, need):
    """``out`` with room for at least ``need`` values (twice as much), its first ``used`` kept."""
    bigger = np.empty(max(2 * len(out), need), dtype=out.dtype)
    bigger[:used] = out[:used]
    return bigger


def _in(c, r):
    """Whether the code point ``c`` lies in the range ``r``."""
    return r[0] <= c <= r[1]


def _within(c, ranges):
    """Whether the code point ``c`` lies in one of ``ranges`` (:func:`.ranges.within`)."""
    for lo, hi in ranges:
        if lo <= c <= hi:
            return True
    return False


def _run_end(a, i):
    """Where the run of ``a[i]`` that starts at ``i`` ends."""
    j = i + 1
    while j < len(a) and a[j] == a[i]:
        j += 1
    return j


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
            if i > 0 and _in(src[i - 1], _AB) and j < n and _in(src[j], _AB):
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


def _punctuation_of(src, classes):
    """The punctuation step of ``src`` as a new array."""
    out = np.empty(len(src) + 1, dtype=np.uint32)
    return out[: _punctuation(src, classes, out, 0)]


def _by_runs(p, classes, letter_map, space, first, second, out, k):
    """The Persian steps (:func:`_stream`) on each Persian run of ``p`` (from an
    Arabic-script character to the last one before a Cyrillic or Latin letter), the rest as
    it is (:func:`neardup.canonical.scripts.map_persian_runs`), written to ``out`` from
    ``k``: (where it ends, False where a character maps to -2)."""
    n = len(p)
    i = 0
    while i < n:
        if not _within(p[i], FA_SCRIPT):
            out[k] = p[i]
            k += 1
            i += 1
            continue
        last = i
        j = i
        while j < n and not _within(p[j], OTHER_LETTERS):
            if _within(p[j], FA_SCRIPT):
                last = j
            j += 1
        k, ok = _stream(p, i, last + 1, False, classes, letter_map, space, first, second, out, k)
        if not ok:
            return k, False
        i = last + 1
    return k, True


def _stream(src, lo, hi, punct, classes, letter_map, space, first, second, out, k):
    """:func:`neardup.canonical.persian.normalize_persian` of ``src[lo:hi]`` (after the
    punctuation step, :func:`_punctuation_at`, with ``punct``; then ``lo`` is 0 and ``hi`` the
    end), written to ``out`` from ``k``: (where it ends, False where a character maps to -2
    in ``letter_map``).

    Its steps, each on the output of the one before:

    1. each run of ``space`` characters one space; each character ``c`` then
       ``letter_map[c]`` (-1: dropped; -2: stop) (:func:`_mapped`);
    2. each run of ZWNJ dropped between two Arabic-block characters, else a space for each
       (:func:`_zwnj_spaces`);
    3. a space on both sides of each run of Persian digits (:func:`_digit_spaces`);
    4. each run of spaces between two Persian letters dropped (:func:`_joined_spaces`);
    5. each run of one such letter three times or more cut to two;
    6. a space before each character that is a ``first`` anchor letter followed by a
       ``second`` one (:func:`_let_out`).

    They run as one loop: each character of the input goes through them in turn as "s
    spaces, then the character c" (c -2 where there are only spaces), each step holding what
    it must see the next character to decide (ZWNJ and spaces held, the character before
    them, whether digits run, the letter repeated, the character an anchor space may go
    before), and letting it out at the end."""
    was_space = False  # step 1: the character before was a space character
    zwnj, before_zwnj = 0, np.int64(-1)  # step 2: ZWNJ held, the character before them
    in_digits = False  # step 3
    spaces, before_spaces = np.int64(0), np.int64(-1)  # step 4: spaces held, the one before
    prev, run = np.int64(-1), 0  # step 5: the letter before, how many times in a row
    held = np.int64(-1)  # step 6: the character waiting for the next one
    i = lo
    while i < hi:
        x = np.int64(src[i])
        i += 1
        if punct and not classes[x] & WORD:  # (a word character stays)
            x, i = _punctuation_at(src, x, i, classes)
        sp = space[x]  # step 1
        if sp and was_space:
            continue
        was_space = sp
        c = _mapped(x, sp, letter_map)
        if c == -2:
            return k, False
        if c == _ZWNJ or c == -1:
            zwnj += np.int64(c == _ZWNJ)
            continue
        s = np.int64(c == _SPACE)
        c = np.int64(_NONE) if s else c
        s = _zwnj_spaces(s, c, zwnj, before_zwnj)  # step 2
        zwnj, before_zwnj = 0, c if c >= 0 else np.int64(_SPACE)
        s, in_digits = _digit_spaces(s, c, in_digits)  # step 3
        spaces += s
        if c < 0:
            continue
        s, spaces, before_spaces = _joined_spaces(spaces, before_spaces, c), 0, c  # step 4
        run = run + 1 if c == prev and not s else 1  # step 5
        prev = c
        if run > 2 and _in(c, _FA):
            continue
        k = _let_out(held, np.int64(_SPACE) if s else c, first, second, out, k)  # step 6
        k = _spaces_out(out, k, s)
        held = c
    k = _let_out(held, np.int64(_SPACE), first, second, out, k)  # the end: what each holds
    return _spaces_out(out, k, zwnj + np.int64(in_digits) + spaces), True


def _punctuation_at(src, x, i, classes):
    """The punctuation step (:func:`_punctuation`) at ``x = src[i - 1]``, not a word
    character, in a text that starts at 0: (the character it gives, where the next one
    starts). A run of ZWNJ or of underscores, or of characters neither ``WORD`` nor ZWNJ
    nor underscore, gives one space (step 1 makes each run of spaces one); a single ZWNJ
    between two Arabic-block characters stays."""
    n = len(src)
    if x == _ZWNJ or x == 95:
        j = _run_end(src, i - 1)
        kept = x == _ZWNJ and j == i and i > 1 and j < n
        kept = kept and _in(src[i - 2], _AB) and _in(src[j], _AB)
        x = x if kept else np.int64(_SPACE)
        i = j
    else:
        while i < n and src[i] != _ZWNJ and src[i] != 95 and not classes[src[i]] & WORD:
            i += 1
        x = np.int64(_SPACE)
    return x, i


def _mapped(x, sp, letter_map):
    """Step 1 of a character ``x`` (``sp``: a space character): a space, or ``letter_map[x]``
    for a character of the BMP, else ``x``."""
    if sp:
        return np.int64(_SPACE)
    return np.int64(letter_map[x]) if x < 0x10000 else x


def _zwnj_spaces(s, c, zwnj, before):
    """Step 2: the ``s`` spaces before ``c`` with the ``zwnj`` ZWNJ held after ``before``:
    none for them between two Arabic-block characters, else one for each."""
    between = s == 0 and _in(before, _AB) and _in(c, _AB)
    return s + zwnj * np.int64(not between)


def _digit_spaces(s, c, in_digits):
    """Step 3: the ``s`` spaces before ``c`` with one more where a run of Persian digits
    ends or starts there, and whether a run goes on after ``c`` (``c`` < 0: only spaces)."""
    ends = s > 0 and in_digits
    s += np.int64(ends)
    in_digits = in_digits and not ends
    if c < 0:
        return s, in_digits
    digit = _in(c, _DIGIT)
    return s + np.int64(digit != in_digits), digit


def _joined_spaces(spaces, before, c):
    """Step 4: the ``spaces`` held between ``before`` and ``c``, none between two Persian
    letters."""
    if spaces and _in(before, _FA) and _in(c, _FA):
        return np.int64(0)
    return spaces


def _let_out(held, nxt, first, second, out, k):
    """Step 6: the character ``held`` (none where < 0) written to ``out`` from ``k``, after
    a space where it is a ``first`` anchor letter and ``nxt`` a ``second`` one (the arrays
    indexed up to U+0700, which stands for any above); where the output ends."""
    if held < 0:
        return k
    out[k] = _SPACE
    k += np.int64(first[min(held, 0x700)] & second[min(max(nxt, 0), 0x700)])
    out[k] = held
    return k + 1


def _spaces_out(out, k, s):
    """``s`` spaces written to ``out`` from ``k``; where they end."""
    for _ in range(s):
        out[k] = _SPACE
        k += 1
    return k
