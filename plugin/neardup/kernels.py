"""Compiled loops for the signing steps that numpy can only express in many passes.

Each kernel is the loop its formula describes, compiled once by numba (``cache=True``: the
machine code is kept beside this file, or in numba's user cache where that is read-only, so
later processes load it in about a tenth of a second). The formulas and their callers live
with their math: :func:`neardup.hashing.hash_runs` (the fmix64 chain),
:func:`neardup.shingles.combine_many` (the chain over every window of token hashes),
:func:`neardup.canonical.letters.token_hashes` (tokens as runs of token characters, hashed
as they are found), :meth:`neardup.canonical.Canonicalizer.token_hashes_many` (numbers and
stop words dropped), :func:`neardup.canonical.scripts.detect_languages` (letters by script),
:func:`neardup.canonical.persian.compiled_steps` (drop_marks, punctuation and the Persian
steps as one loop over the characters, many texts a call),
:func:`neardup.canonical.letters.text_flags` (which classes of characters a text holds) and
:func:`neardup.canonical.letters.late_steps` (casefold and the steps after it, one map per
character), :func:`neardup.ragged.segment_unique` (each document's sorted distinct values),
:func:`neardup.simhash.simhash_many` (the bit votes), :func:`neardup.sampling.winnow_many`,
:func:`neardup.minhash.oph_many` (the bin minima and their densification); the embedded
engine's keys column has its own (:mod:`neardup.engines.embedded.packing`). This module is
imported on first use, so commands that sign nothing never load numba.

All arithmetic is on uint64 (wrapping, as numpy's) or int64, so the results are the same,
bit for bit, as the formulas they compute (tests/test_kernels.py, tests/test_batch.py and
tests/test_embedded.py check them against those formulas written out in plain Python or numpy;
tests/test_canonical_fast.py the Persian passes against the steps one by one).
"""

from __future__ import annotations

import numpy as np

#: True in the interpreted twin of this module (:func:`neardup.loops.interpreted`): every
#: function then runs as written, with numpy scalars (their wrapping uint64 arithmetic warns
#: of the overflow it relies on: :func:`neardup.loops.loops` callers run it with those
#: warnings off).
INTERPRETED = globals().get("INTERPRETED", False)
if INTERPRETED:

    def njit(*args, **options):  # noqa: ARG001 - numba's options, unused when interpreted
        return args[0] if args and callable(args[0]) else (lambda f: f)
else:
    from numba import njit

from .mixing import GOLDEN, fmix64_inplace


#: :func:`neardup.hashing.fmix64` of one uint64: the numpy formula's own source, compiled.
_fmix64 = njit(cache=True, nogil=True, inline="always")(fmix64_inplace)


@njit(cache=True, nogil=True, inline="always")
def _run_hash(units, s, n, seed, size):
    """h = fmix64(a_n xor size), a_1 = u_0 xor seed, a_{j+1} = fmix64(a_j * C + u_j), of
    the run ``units[s : s + n]`` (n >= 1)."""
    acc = np.uint64(units[s]) ^ seed
    for j in range(s + 1, s + n):
        acc = _fmix64(acc * GOLDEN + np.uint64(units[j]))
    return _fmix64(acc ^ size)


@njit(cache=True, nogil=True)
def hash_runs(units, starts, lengths, sizes, seed):
    """:func:`_run_hash` of each run ``units[s : s + n]`` (n >= 1)."""
    out = np.empty(len(starts), dtype=np.uint64)
    for r in range(len(starts)):
        out[r] = _run_hash(units, starts[r], lengths[r], seed, np.uint64(sizes[r]))
    return out


@njit(cache=True, nogil=True)
def window_hashes(units, offsets, widths):
    """:func:`hash_runs` (seed 0, size = length) of every window of ``widths[d]`` consecutive
    units of each document ``units[offsets[d] : offsets[d + 1]]`` (one window of all its n
    units where n < widths[d], none where n = 0): (hashes, their offsets)."""
    n_docs = len(offsets) - 1
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        n = offsets[d + 1] - offsets[d]
        out_off[d + 1] = out_off[d] + (n - min(n, widths[d]) + 1 if n > 0 else 0)
    out = np.empty(out_off[n_docs], dtype=np.uint64)
    for d in range(n_docs):
        width = min(offsets[d + 1] - offsets[d], widths[d])
        size = np.uint64(width)
        m = out_off[d + 1] - out_off[d]
        r = 0
        while r + 4 <= m:  # four windows at a time: their chains interleave
            s = offsets[d] + r
            a0, a1, a2, a3 = (
                np.uint64(units[s]),
                np.uint64(units[s + 1]),
                np.uint64(units[s + 2]),
                np.uint64(units[s + 3]),
            )
            for j in range(s + 1, s + width):
                a0 = _fmix64(a0 * GOLDEN + np.uint64(units[j]))
                a1 = _fmix64(a1 * GOLDEN + np.uint64(units[j + 1]))
                a2 = _fmix64(a2 * GOLDEN + np.uint64(units[j + 2]))
                a3 = _fmix64(a3 * GOLDEN + np.uint64(units[j + 3]))
            o = out_off[d] + r
            out[o], out[o + 1], out[o + 2], out[o + 3] = (
                _fmix64(a0 ^ size),
                _fmix64(a1 ^ size),
                _fmix64(a2 ^ size),
                _fmix64(a3 ^ size),
            )
            r += 4
        for q in range(r, m):  # the rest one at a time
            out[out_off[d] + q] = _run_hash(units, offsets[d] + q, width, np.uint64(0), size)
    return out, out_off


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True, inline="always")
def _member(v, table, lo, hi, empty):
    """Whether ``v`` is in the linear-probing table ``table[lo:hi]`` (2^b slots, free ones
    holding ``empty``; :attr:`neardup.hashing.KeySet.probing`)."""
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def script_counts(cps, bounds, letter, script, sample, codes):
    """(D, codes): per text ``cps[bounds[d] : bounds[d + 1]]``, its first ``sample`` code
    points with ``letter`` set, counted by their ``script`` code (0 .. codes - 1)."""
    out = np.zeros((len(bounds) - 1, codes), dtype=np.int64)
    for d in range(len(bounds) - 1):
        if bounds[d + 1] - bounds[d] <= sample:  # every letter counts: no branch on letters
            for i in range(bounds[d], bounds[d + 1]):
                c = cps[i]
                out[d, script[c]] += np.int64(letter[c])
            continue
        need = sample
        for i in range(bounds[d], bounds[d + 1]):
            c = cps[i]
            if letter[c]:
                out[d, script[c]] += 1
                need -= 1
                if need == 0:
                    break
    return out


_BYTE_LSBS = np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True)
def _votes(hashes, weights, lo, hi, sums, lanes):
    """The SimHash of ``hashes[lo:hi]``: bit b is set iff 2 * sum_i w_i * bit_b(h_i) > sum_i
    w_i (integer weights, so the sums are exact); ``sums`` is scratch space for 64 sums,
    ``lanes`` for 8 counters. The values of the first one's weight (tf = 1: most) are
    counted 8 bits at a time: ``lanes[j]`` holds in its byte k how many have bit 8k + j set
    (added to the sums, times the weight, before a byte can pass 255); the others bit by bit."""
    sums[:] = 0
    lanes[:] = 0
    total = 0
    common, counted = weights[lo], 0
    for i in range(lo, hi):
        w, h = weights[i], hashes[i]
        total += w
        if w != common:
            for b in range(64):
                sums[b] += w * np.int64((h >> np.uint64(b)) & np.uint64(1))
            continue
        for j in range(8):
            lanes[j] += (h >> np.uint64(j)) & _BYTE_LSBS
        counted += 1
        if counted == 255:
            _lanes_to_sums(lanes, common, sums)
            counted = 0
    _lanes_to_sums(lanes, common, sums)
    fp = np.uint64(0)
    for b in range(64):
        if 2 * sums[b] > total:
            fp |= np.uint64(1) << np.uint64(b)
    return fp


@njit(cache=True, nogil=True)
def _lanes_to_sums(lanes, weight, sums):
    """Byte k of ``lanes[j]`` times ``weight`` onto ``sums[8k + j]``; the lanes emptied."""
    for j in range(8):
        for k in range(8):
            sums[8 * k + j] += weight * np.int64((lanes[j] >> np.uint64(8 * k)) & np.uint64(0xFF))
    lanes[:] = 0


@njit(cache=True, nogil=True)
def simhash_votes(hashes, weights, offsets):
    """Per document: :func:`_votes` of its hashes and weights (0 for an empty document)."""
    d = len(offsets) - 1
    out = np.zeros(d, dtype=np.uint64)
    sums = np.zeros(64, dtype=np.int64)
    lanes = np.zeros(8, dtype=np.uint64)
    for doc in range(d):
        if offsets[doc + 1] > offsets[doc]:
            out[doc] = _votes(hashes, weights, offsets[doc], offsets[doc + 1], sums, lanes)
    return out


@njit(cache=True, nogil=True)
def tf_simhash(hashes, offsets, weight_of_tf):
    """:func:`simhash_votes` of each document's distinct values, the one seen tf times
    weighted ``weight_of_tf[tf]``: the counts come from an open-addressing table per
    document (slot = the hash's low bits, linear probing), so nothing is sorted."""
    d = len(offsets) - 1
    out = np.zeros(d, dtype=np.uint64)
    longest = 0
    for doc in range(d):
        longest = max(longest, offsets[doc + 1] - offsets[doc])
    size = 16
    while size < 2 * longest:
        size *= 2
    keys = np.zeros(size, dtype=np.uint64)
    counts = np.zeros(size, dtype=np.int64)
    used = np.empty(size, dtype=np.int64)
    distinct = np.empty(size, dtype=np.uint64)
    weights = np.empty(size, dtype=np.int64)
    sums = np.zeros(64, dtype=np.int64)
    lanes = np.zeros(8, dtype=np.uint64)
    for doc in range(d):
        lo, hi = offsets[doc], offsets[doc + 1]
        if lo == hi:
            continue
        mask = np.uint64(16 - 1)
        while mask + np.uint64(1) < np.uint64(2 * (hi - lo)):
            mask = (mask << np.uint64(1)) | np.uint64(1)
        n_used = 0
        for i in range(lo, hi):
            h = hashes[i]
            slot = np.int64(h & mask)
            while counts[slot] != 0 and keys[slot] != h:
                slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
            if counts[slot] == 0:
                keys[slot] = h
                used[n_used] = slot
                n_used += 1
            counts[slot] += 1
        for j in range(n_used):
            slot = used[j]
            distinct[j] = keys[slot]
            weights[j] = weight_of_tf[counts[slot]]
            counts[slot] = 0
        out[doc] = _votes(distinct, weights, 0, n_used, sums, lanes)
    return out


@njit(cache=True, nogil=True)
def winnow(seq, offsets, window):
    """Per document of ``seq`` (ragged): the positions of the rightmost minimum of every
    window of ``min(window, n)`` consecutive values, each recorded once; (positions, counts).
    The minimum of the window before stands while it is inside (the new value takes its
    place where it is not larger: it is further right); only a window whose minimum has just
    left is scanned (Schleimer, Wilkerson and Aiken 2003): about n + n/w * w steps, not n * w."""
    pos = np.empty(len(seq), dtype=np.int64)
    counts = np.zeros(len(offsets) - 1, dtype=np.int64)
    k = 0
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        w = min(window, hi - lo)
        first, m = k, lo - 1
        for i in range(lo, hi - w + 1 if hi > lo else lo):
            e = i + w - 1  # the window's new value
            if m < i:  # its minimum left: the window scanned
                m = i
                for j in range(i + 1, i + w):
                    m = j if seq[j] <= seq[m] else m
            elif seq[e] <= seq[m]:
                m = e
            else:
                continue  # the same minimum, recorded
            pos[k] = m
            k += 1
        counts[d] = k - first
    return pos[:k].copy(), counts


@njit(cache=True, nogil=True)
def oph_bins(shingles, offsets, num_perm, seed):
    """Per document: the minimum of h = fmix64(x xor seed) over its shingles x in each of the
    ``num_perm`` bins floor(h * K / 2^64) (taken from the high 32 bits); 2^64 - 1 where a
    bin is empty."""
    d = len(offsets) - 1
    out = np.full((d, num_perm), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    k = np.uint64(num_perm)
    for doc in range(d):
        for i in range(offsets[doc], offsets[doc + 1]):
            h = _fmix64(shingles[i] ^ seed)
            b = ((h >> np.uint64(32)) * k) >> np.uint64(32)
            if h < out[doc, b]:
                out[doc, b] = h
    return out


@njit(cache=True, nogil=True)
def oph_densify(sketches, base):
    """Optimal densification (Shrivastava 2017) of each row of :func:`oph_bins` holding a
    filled bin, in place: empty bin e (2^64 - 1) takes the value of the first bin filled
    before densification among its probes bin(fmix64(((e << 20) + a) xor base)), a = 1, 2, ...
    (bin as in :func:`oph_bins`)."""
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    d, num_perm = sketches.shape
    k = np.uint64(num_perm)
    src = np.empty(num_perm, dtype=np.uint64)
    for r in range(d):
        row = sketches[r]
        n_filled = 0
        for e in range(num_perm):
            src[e] = row[e]
            n_filled += row[e] != empty
        if n_filled == 0 or n_filled == num_perm:
            continue
        for e in range(num_perm):
            if src[e] != empty:
                continue
            a = np.uint64(1)
            while True:
                p = _fmix64(((np.uint64(e) << np.uint64(20)) + a) ^ base)
                b = ((p >> np.uint64(32)) * k) >> np.uint64(32)
                if src[b] != empty:
                    row[e] = src[b]
                    break
                a += np.uint64(1)


@njit(cache=True, nogil=True)
def segment_unique(values, offsets):
    """The sorted distinct values of each document ``values[offsets[d] : offsets[d + 1]]``
    (uint64; :func:`neardup.ragged.segment_unique`): (values, offsets). Each document's
    values are spread over 2^b buckets by their top b bits (2^b >= n: a counting sort), which
    leaves each at most its bucket away from its place, so an insertion sort finishes in
    about n steps for hashes (uniform: a bucket holds one value on average); a document
    whose values crowd into a bucket of more than 32 is sorted by comparisons. Then the
    repeats out."""
    n_docs = len(offsets) - 1
    out = np.empty(len(values), dtype=np.uint64)
    new_off = np.zeros(n_docs + 1, dtype=np.int64)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    starts = np.empty(2 * longest + 2, dtype=np.int64)  # (2^b < 2n)
    k = 0
    for d in range(n_docs):
        lo, hi = offsets[d], offsets[d + 1]
        n = hi - lo
        seg = out[k : k + n]
        seg[:] = values[lo:hi]
        if n > 16:
            _bucketed(values[lo:hi], seg, starts)
        for i in range(1, n):  # insertion sort
            v = seg[i]
            j = i - 1
            while j >= 0 and seg[j] > v:
                seg[j + 1] = seg[j]
                j -= 1
            seg[j + 1] = v
        m = 0
        for i in range(n):
            seg[m] = seg[i]
            m += np.int64(i == 0 or seg[i] != seg[m - 1])
        k += m
        new_off[d + 1] = k
    return out[:k], new_off


@njit(cache=True, nogil=True)
def _bucketed(values, seg, starts):
    """``values`` into ``seg`` by their top b bits (2^b >= n; counts and starts in
    ``starts``), or sorted there where a bucket would hold more than 32."""
    n = len(values)
    b = 1
    while (1 << b) < n:
        b += 1
    shift = np.uint64(64 - b)
    starts[: (1 << b) + 1] = 0
    for i in range(n):
        starts[(values[i] >> shift) + 1] += 1
    most = 0
    for j in range(1 << b):
        most = max(most, starts[j + 1])
        starts[j + 1] += starts[j]
    if most > 32:  # not hashes: a comparison sort
        seg.sort()
        return
    for i in range(n):
        j = values[i] >> shift
        seg[starts[j]] = values[i]
        starts[j] += 1


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def positions_in(cps, table):
    """The indices i where ``table[cps[i]]`` (bool) holds: ``np.flatnonzero(table[cps])``
    without the array of every lookup."""
    out = np.empty(len(cps), dtype=np.int64)
    k = 0
    for i in range(len(cps)):
        out[k] = i
        k += np.int64(table[cps[i]])
    return out[:k].copy()


@njit(cache=True, nogil=True)
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
