"""The loops of :mod:`neardup.canonical.letters` and the canonical tokens: tokens as runs
of token characters hashed as they are found (:func:`.letters.token_hashes`), numbers and stop
words dropped (:meth:`.Canonicalizer.token_hashes_many`), one map per code point
(:func:`.letters.late_steps`), the classes of characters a text holds (:func:`.flags.text_flags`)
and where a mark may compose. Each is the "compiled" backend of a rule whose reference form is
in :mod:`.letters` (tests/test_loops.py, tests/test_canonical_fast.py check them equal).

This module is their interpreted form, the statement of each loop; the C module ``_letters_loops``
beside it is their compiled form, built at install (:mod:`neardup.sketches.loops` chooses).
All arithmetic is on uint64 (wrapping) or int64, so both give the same values, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..sketches.mixing import GOLDEN, fmix64_inplace

#: :func:`neardup.sketches.hashing.fmix64` of one uint64 (numpy's wrapping arithmetic).
_fmix64 = fmix64_inplace


@np.errstate(over="ignore")  # uint64 products wrap, as in C
def token_hashes(cps, table, digits, bounds, seed):
    """Runs of ``table`` code points, each hashed as :func:`hash_runs` (size = length): for
    each maximal run, its hash, whether all its code points are ``digits``, and the text it
    lies in (the last ``d`` with ``bounds[d]`` <= its start; ``bounds`` ascending). Two
    passes: the runs' starts and ends found without a branch on where they are (it is
    unpredictable), then each run hashed."""
    n = len(cps)
    starts = np.empty(n // 2 + 2, dtype=np.int64)
    ends = np.empty(n // 2 + 2, dtype=np.int64)
    ks = 0
    ke = 0
    prev = 0
    for i in range(n):
        cur = np.int64(table[cps[i]])
        starts[ks] = i
        ks += cur & (1 - prev)
        ends[ke] = i
        ke += prev & (1 - cur)
        prev = cur
    if prev:
        ends[ke] = n
    hashes = np.empty(ks, dtype=np.uint64)
    number = np.empty(ks, dtype=np.bool_)
    doc = np.empty(ks, dtype=np.int64)
    d = 0
    for r in range(ks):
        s, e = starts[r], ends[r]
        while d + 1 < len(bounds) and bounds[d + 1] <= s:
            d += 1
        acc = np.uint64(cps[s]) ^ seed
        only = digits[cps[s]] != 0
        for j in range(s + 1, e):
            acc = _fmix64(acc * GOLDEN + np.uint64(cps[j]))
            only = only and digits[cps[j]] != 0
        hashes[r] = _fmix64(acc ^ np.uint64(e - s))
        number[r] = only
        doc[r] = d
    return hashes, number, doc


def _member(v, table, lo, hi, empty):
    """Whether ``v`` is in the linear-probing table ``table[lo:hi]`` (2^b slots, free ones
    holding ``empty``; :attr:`neardup.sketches.hashing.KeySet.probing`)."""
    if hi == lo or v == empty:
        return False
    mask = np.uint64(hi - lo - 1)
    j = v & mask
    while True:
        x = table[lo + np.int64(j)]
        if x == v:
            return True
        if x == empty:
            return False
        j = (j + np.uint64(1)) & mask


def kept_tokens(hashes, number, doc, drop_numbers, group, table, bounds, empties, docs):
    """The tokens of :func:`token_hashes` kept, in order: not a number (with ``drop_numbers``)
    and not in the set of their text's ``group`` (-1: none; set g at ``table[bounds[g] :
    bounds[g + 1]]``, looked up as :func:`_member`); with the count kept per text."""
    out = np.empty(len(hashes), dtype=np.uint64)
    counts = np.zeros(docs, dtype=np.int64)
    k = 0
    for t in range(len(hashes)):
        if drop_numbers and number[t]:
            continue
        v = hashes[t]
        d = doc[t]
        g = group[d]
        if g >= 0 and _member(v, table, bounds[g], bounds[g + 1], empties[g]):
            continue
        out[k] = v
        counts[d] += 1
        k += 1
    return out[:k].copy(), counts


def map_code_points(cps, bounds, table):
    """Per text ``cps[bounds[d] : bounds[d + 1]]``: each code point ``c`` to ``table[c]``
    (int32, one per code point), or the text as it is, and False, where some ``c`` maps to a
    negative value. Returns (code points, ok per text)."""
    out = np.empty(len(cps), dtype=np.uint32)
    ok = np.ones(len(bounds) - 1, dtype=np.bool_)
    for d in range(len(bounds) - 1):
        for i in range(bounds[d], bounds[d + 1]):
            v = table[cps[i]]
            if v < 0:
                ok[d] = False
                break
            out[i] = v
        if not ok[d]:
            out[bounds[d] : bounds[d + 1]] = cps[bounds[d] : bounds[d + 1]]
    return out, ok


def or_flags(cps, bounds, table):
    """Per text ``cps[bounds[d] : bounds[d + 1]]``: the bitwise or of ``table[c]`` (uint8)
    over its code points ``c``, which classes of characters it holds (no branch on them)."""
    out = np.zeros(len(bounds) - 1, dtype=np.uint8)
    for d in range(len(bounds) - 1):
        acc = np.uint8(0)
        for i in range(bounds[d], bounds[d + 1]):
            acc |= table[cps[i]]
        out[d] = acc
    return out


def positions_in(cps, table):
    """The indices i where ``table[cps[i]]`` (bool) holds: ``np.flatnonzero(table[cps])``
    without the array of every lookup."""
    out = np.empty(len(cps), dtype=np.int64)
    k = 0
    for i in range(len(cps)):
        out[k] = i
        k += np.int64(table[cps[i]])
    return out[:k].copy()


def marks_may_compose(cps, starts, ends, table, mark, combining, pairs):
    """Per text ``cps[starts[d] : ends[d]]``: whether a character whose ``table`` entry has
    the bit ``mark`` follows one whose entry has the bit ``combining``, or one it forms a
    pair with (``prev << 21 | c`` in the sorted ``pairs``)."""
    out = np.zeros(len(starts), dtype=np.bool_)
    for d in range(len(starts)):
        for i in range(starts[d] + 1, ends[d]):
            if table[cps[i]] & mark:
                prev = np.uint64(cps[i - 1])
                key = (prev << np.uint64(21)) | np.uint64(cps[i])
                at = np.searchsorted(pairs, key)
                if table[cps[i - 1]] & combining or (at < len(pairs) and pairs[at] == key):
                    out[d] = True
                    break
    return out
