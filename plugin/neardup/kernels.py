"""Compiled loops for the signing steps that numpy can only express in many passes.

Each kernel is the loop its formula describes, compiled once by numba (``cache=True``: the
machine code is kept beside this file, or in numba's user cache where that is read-only, so
later processes load it in about a tenth of a second). The formulas and their callers live
with their math: :func:`neardup.hashing.hash_runs` (the fmix64 chain), :func:`neardup.canonical.letters.token_hashes`
(tokens as runs of token characters, hashed as they are found),
:meth:`neardup.canonical.Canonicalizer.token_hashes_many` (numbers and stop words dropped),
:func:`neardup.canonical.scripts.detect_languages` (letters by script),
:func:`neardup.canonical.persian.compiled_steps` (the Persian steps as passes over code points, many texts a call),
:func:`neardup.canonical.letters.text_flags` (which classes of characters a text holds) and
:func:`neardup.canonical.letters.late_steps` (casefold and the steps after it, one map per character),
:func:`neardup.simhash.simhash_many` (the bit votes), :func:`neardup.sampling.winnow_many`,
:func:`neardup.minhash.oph_many` (the bin minima and their densification) and
:func:`neardup.encoding.pack_keys_many` (the embedded engine's keys column). This module is
imported on first use, so commands that sign nothing never load numba.

All arithmetic is on uint64 (wrapping, as numpy's) or int64, so the results are the same,
bit for bit, as the formulas they compute (tests/test_kernels.py, tests/test_batch.py and
tests/test_embedded.py check them against those formulas written out in plain Python or numpy;
tests/test_canonical_fast.py the Persian passes against the steps one by one).
"""

from __future__ import annotations

import sys

import numpy as np


def _import_numba_without_blas_check() -> None:
    """Import numba's array functions with scipy's BLAS bindings kept out for the while.
    ``numba.np.arraymath`` imports ``scipy.linalg.cython_blas`` (where scipy is installed:
    hazm brings it) only to decide whether the inner products of ``np.correlate`` and
    ``np.convolve`` call BLAS: 0.05 s of every process that loads these kernels, which use
    no BLAS. Refused, those inner products are plain loops; ``np.dot`` and ``np.linalg``
    in compiled code still find BLAS (they check when compiled), and scipy imports as usual."""
    blas = "scipy.linalg.cython_blas"
    if "numba.np.arraymath" in sys.modules or blas in sys.modules:
        return
    sys.modules[blas] = None  # (an import of a module mapped to None fails at once)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if blas in sys.modules and sys.modules[blas] is None:
            del sys.modules[blas]


_import_numba_without_blas_check()

from numba import njit  # noqa: E402

from .mixing import GOLDEN, fmix64_inplace  # noqa: E402


#: :func:`neardup.hashing.fmix64` of one uint64: the numpy formula's own source, compiled.
_fmix64 = njit(cache=True, nogil=True, inline="always")(fmix64_inplace)


@njit(cache=True, nogil=True)
def hash_runs(units, starts, lengths, sizes, seed):
    """h = fmix64(a_n xor size), a_1 = u_0 xor seed, a_{j+1} = fmix64(a_j * C + u_j), for
    each run ``units[s : s + n]`` (n >= 1)."""
    out = np.empty(len(starts), dtype=np.uint64)
    for r in range(len(starts)):
        s = starts[r]
        acc = np.uint64(units[s]) ^ seed
        for j in range(s + 1, s + lengths[r]):
            acc = _fmix64(acc * GOLDEN + np.uint64(units[j]))
        out[r] = _fmix64(acc ^ np.uint64(sizes[r]))
    return out


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


@njit(cache=True, nogil=True, inline="always")
def _votes(hashes, weights, lo, hi, sums):
    """The SimHash of ``hashes[lo:hi]``: bit b is set iff 2 * sum_i w_i * bit_b(h_i) > sum_i
    w_i (integer weights, so the sums are exact); ``sums`` is scratch space for 64 sums."""
    sums[:] = 0
    total = 0
    for i in range(lo, hi):
        total += weights[i]
        for b in range(64):
            sums[b] += weights[i] * np.int64((hashes[i] >> np.uint64(b)) & np.uint64(1))
    fp = np.uint64(0)
    for b in range(64):
        if 2 * sums[b] > total:
            fp |= np.uint64(1) << np.uint64(b)
    return fp


@njit(cache=True, nogil=True)
def simhash_votes(hashes, weights, offsets):
    """Per document: :func:`_votes` of its hashes and weights (0 for an empty document)."""
    d = len(offsets) - 1
    out = np.zeros(d, dtype=np.uint64)
    sums = np.zeros(64, dtype=np.int64)
    for doc in range(d):
        if offsets[doc + 1] > offsets[doc]:
            out[doc] = _votes(hashes, weights, offsets[doc], offsets[doc + 1], sums)
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
        out[doc] = _votes(distinct, weights, 0, n_used, sums)
    return out


@njit(cache=True, nogil=True)
def winnow(seq, offsets, window):
    """Per document of ``seq`` (ragged): the positions of the rightmost minimum of every
    window of ``min(window, n)`` consecutive values, each recorded once; (positions, counts)."""
    pos = np.empty(len(seq), dtype=np.int64)
    counts = np.zeros(len(offsets) - 1, dtype=np.int64)
    k = 0
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        if hi <= lo:
            continue
        w = min(window, hi - lo)
        first, last = k, -1
        for i in range(lo, hi - w + 1):
            m = i
            for j in range(i + 1, i + w):
                if seq[j] <= seq[m]:
                    m = j
            if m != last:
                pos[k] = m
                k += 1
                last = m
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
def pack_keys(values, offsets, shingles, shingle_offsets, exact, has_exact):
    """The keys column of each document d (:func:`neardup.encoding.pack_keys`): per field f
    (its keys ``values[offsets[f, d] : offsets[f, d + 1]]``) a tag byte, then nothing for
    the one key that is the exact digest's (``exact[d]``, where ``has_exact[d]``); a
    little-endian bitmap over the document's sorted shingles
    (``shingles[shingle_offsets[d] : shingle_offsets[d + 1]]``) for strictly increasing keys
    that are all shingles, when shorter than 8 bytes a key; else a varint count and the keys
    as little-endian uint64. Returns (bytes, bounds of each document's)."""
    n_fields, n_docs = offsets.shape[0], len(shingle_offsets) - 1
    cap = n_fields * n_docs * 11 + 8 * len(values) + n_fields * (len(shingles) // 8 + n_docs)
    out = np.zeros(cap, dtype=np.uint8)
    bounds = np.empty(n_docs + 1, dtype=np.int64)
    at = np.empty(len(values) + 1, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        bounds[d] = pos
        s_lo = shingle_offsets[d]
        n = shingle_offsets[d + 1] - s_lo
        for f in range(n_fields):
            lo, hi = offsets[f, d], offsets[f, d + 1]
            m = hi - lo
            if m == 1 and has_exact[d] and values[lo] == exact[d]:
                out[pos] = 2  # the tags of neardup.encoding: 0 raw, 1 subset, 2 exact
                pos += 1
                continue
            subset = m > 0 and (n + 7) // 8 < 8 * m
            i = 0
            for j in range(m):  # a merge walk: where each key stands among the shingles
                if not subset:
                    break
                v = values[lo + j]
                if j and v <= values[lo + j - 1]:
                    subset = False
                    break
                while i < n and shingles[s_lo + i] < v:
                    i += 1
                if i == n or shingles[s_lo + i] != v:
                    subset = False
                    break
                at[j] = i
            if subset:
                out[pos] = 1
                pos += 1
                for j in range(m):
                    out[pos + at[j] // 8] |= np.uint8(1 << (at[j] % 8))
                pos += (n + 7) // 8
                continue
            out[pos] = 0
            pos += 1
            c = m
            while True:  # varint
                b = c & 0x7F
                c >>= 7
                if c:
                    out[pos] = b | 0x80
                    pos += 1
                else:
                    out[pos] = b
                    pos += 1
                    break
            for j in range(lo, hi):
                v = values[j]
                for byte in range(8):
                    out[pos] = np.uint8((v >> np.uint64(8 * byte)) & np.uint64(0xFF))
                    pos += 1
    bounds[n_docs] = pos
    return out[:pos].copy(), bounds


@njit(cache=True, nogil=True)
def persian_pieces(cps, letter_map, space, first, second, word, step, late):
    """The anchor pieces of one Persian text (:func:`neardup.canonical.persian.normalize_persian`),
    its steps as passes over code points, each on the one before's output
    (:func:`_persian_run`). With ``step``, the Persian step after the punctuation step
    (``persian_step(drop_punctuation(text))`` of :mod:`neardup.canonical.canonicalizer`):
    :func:`_punctuation`, then, if Arabic script is left, :func:`_persian_run` on the text,
    or, where it has a Cyrillic or Latin letter, on each Persian run (from an Arabic-script
    character to the last one before such a letter), the rest as it is
    (:func:`neardup.canonical.scripts.map_persian_runs`); then, if ``late`` is not empty,
    each character through it (the steps after the Persian one,
    :func:`neardup.canonical.letters.late_steps_table`) unless one maps to -1. Returns
    (code points, status): 0 where a character maps to -2 in ``letter_map`` (a step these
    passes do not make applies; the code points are then empty), 1 done, 2 done with ``late``."""
    if step:
        out, ok = _persian_step(cps, letter_map, space, first, second, word)
    else:
        out, ok = _persian_run(cps, letter_map, space, first, second)
    if not ok:
        return out, 0
    if len(late) == 0:
        return out, 1
    mapped, ok = map_code_points(out, np.array([0, len(out)], dtype=np.int64), late)
    return (mapped, 2) if ok[0] else (out, 1)


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
def persian_pieces_many(cps, bounds, letter_map, space, first, second, word, step, late):
    """:func:`persian_pieces` of each text ``cps[bounds[d] : bounds[d + 1]]``: (the outputs
    end to end, where each starts and the last ends, the status of each)."""
    n = len(bounds) - 1
    out = np.empty(len(cps) + len(cps) // 2 + 16, dtype=np.uint32)  # grown as needed
    at = np.zeros(n + 1, dtype=np.int64)
    status = np.zeros(n, dtype=np.int64)
    k = 0
    for d in range(n):
        made, status[d] = persian_pieces(cps[bounds[d] : bounds[d + 1]], letter_map, space, first, second, word, step, late)
        if k + len(made) > len(out):
            out = _grown(out, k, k + len(made))
        out[k : k + len(made)] = made
        k += len(made)
        at[d + 1] = k
    return out[:k], at, status


@njit(cache=True, nogil=True)
def _persian_step(cps, letter_map, space, first, second, word):
    """``persian_step(drop_punctuation(text))`` (see :func:`persian_pieces`)."""
    cps, arabic = _punctuation(cps, word)
    if not arabic:
        return cps, True
    n = len(cps)
    other = False
    for i in range(n):
        if _other_letter(cps[i]):
            other = True
            break
    if not other:
        return _persian_run(cps, letter_map, space, first, second)
    out = np.empty(n + n // 2 + 16, dtype=np.uint32)  # grown as needed: a run may come out longer
    k = 0
    i = 0
    while i < n:
        if k + 1 > len(out):
            out = _grown(out, k, k + 1)
        if not _persian_letter(cps[i]):
            out[k] = cps[i]
            k += 1
            i += 1
            continue
        last = i
        j = i
        while j < n and not _other_letter(cps[j]):
            if _persian_letter(cps[j]):
                last = j
            j += 1
        run, ok = _persian_run(cps[i : last + 1], letter_map, space, first, second)
        if not ok:
            return run, False
        if k + len(run) > len(out):
            out = _grown(out, k, k + len(run))
        out[k : k + len(run)] = run
        k += len(run)
        i = last + 1
    return out[:k].copy(), True


@njit(cache=True, nogil=True)
def _grown(out, used, need):
    """``out`` with room for at least ``need`` values (twice as much), its first ``used`` kept."""
    bigger = np.empty(max(2 * len(out), need), dtype=out.dtype)
    bigger[:used] = out[:used]
    return bigger


@njit(cache=True, nogil=True, inline="always")
def _persian_letter(c):
    """The Arabic-script class of :data:`neardup.canonical.scripts._FA_RUN`."""
    return _in(c, 0x600, 0x6FF) or _in(c, 0x750, 0x77F) or _in(c, 0xFB50, 0xFDFF) or _in(c, 0xFE70, 0xFEFF)


@njit(cache=True, nogil=True, inline="always")
def _other_letter(c):
    """The Cyrillic and Latin class of :data:`neardup.canonical.scripts._OTHER_LETTER`."""
    return _in(c, 0x400, 0x52F) or _in(c, 65, 90) or _in(c, 97, 122) or _in(c, 0xC0, 0x24F)


@njit(cache=True, nogil=True)
def _persian_run(cps, letter_map, space, first, second):
    """:func:`neardup.canonical.persian.normalize_persian` of one text: each run of
    ``space`` characters one space, each character through ``letter_map``
    (:func:`_spaces_and_letters`); ZWNJ (:func:`_zwnj`); Persian digits set apart
    (:func:`_digits_apart`); spaces between letters dropped (:func:`_joined_letters`);
    repeats cut (:func:`_two_repeats`); a space before each anchor (:func:`_anchor_cuts`)."""
    a, ok = _spaces_and_letters(cps, letter_map, space)
    if not ok:
        return a, False
    return _anchor_cuts(_two_repeats(_joined_letters(_digits_apart(_zwnj(a)))), first, second), True


@njit(cache=True, nogil=True)
def _punctuation(cps, word):
    """:func:`neardup.canonical.letters.drop_punctuation` (its pattern ``_PUNCT``): each
    run of characters neither ``word`` (``str.isalnum``: with the underscore, ``\\w``) nor ZWNJ, each run of underscores, and each
    run of ZWNJ not between two Arabic-block characters, to a space; of a run of n >= 2
    ZWNJ between two such characters, the first n - 1 and the last each to a space (the
    pattern's backtracking). Also whether an Arabic-script character (U+0600..U+06FF,
    U+FB50..U+FEFF) is left."""
    n = len(cps)
    out = np.empty(n, dtype=np.uint32)
    k = 0
    i = 0
    arabic = False
    while i < n:
        c = cps[i]
        j = i + 1
        if c == 0x200C:
            j = _run_end(cps, i)
            if i > 0 and _in(cps[i - 1], 0x600, 0x6FF) and j < n and _in(cps[j], 0x600, 0x6FF):
                if j - i == 1:
                    out[k] = c
                else:
                    out[k] = 32
                    out[k + 1] = 32
                    k += 1
            else:
                out[k] = 32
        elif c == 95:
            j = _run_end(cps, i)
            out[k] = 32
        elif not word[c]:
            while j < n and cps[j] != 0x200C and cps[j] != 95 and not word[cps[j]]:
                j += 1
            out[k] = 32
        else:
            out[k] = c
            arabic = arabic or _in(c, 0x600, 0x6FF) or _in(c, 0xFB50, 0xFEFF)
        k += 1
        i = j
    return out[:k], arabic


@njit(cache=True, nogil=True, inline="always")
def _in(c, lo, hi):
    return lo <= c <= hi


@njit(cache=True, nogil=True, inline="always")
def _run_end(a, i):
    """Where the run of ``a[i]`` that starts at ``i`` ends."""
    j = i + 1
    while j < len(a) and a[j] == a[i]:
        j += 1
    return j


@njit(cache=True, nogil=True)
def _spaces_and_letters(cps, letter_map, space):
    """Each run of ``space`` characters one space; each BMP character ``c`` then
    ``letter_map[c]`` (-1: dropped; -2: stop, returning False)."""
    n = len(cps)
    a = np.empty(n, dtype=np.uint32)
    m = 0
    i = 0
    while i < n:
        c = cps[i]
        if space[c]:
            while i < n and space[cps[i]]:
                i += 1
            a[m] = 32
            m += 1
            continue
        i += 1
        v = letter_map[c] if c < 0x10000 else np.int32(c)
        if v == -2:
            return a[:0], False
        if v >= 0:
            a[m] = v
            m += 1
    return a[:m], True


@njit(cache=True, nogil=True)
def _zwnj(a):
    """Each run of ZWNJ dropped between two Arabic-block characters (U+0600..U+06FF), else
    a space for each."""
    return _runs_between(a, 0x200C, 0x600, 0x6FF)


@njit(cache=True, nogil=True)
def _runs_between(a, ch, lo, hi):
    """Each run of ``ch`` dropped where the characters on both sides of it lie in
    ``lo..hi``, else a space for each of its characters; the others kept."""
    m = len(a)
    z = np.empty(m, dtype=np.uint32)
    k = 0
    i = 0
    while i < m:
        if a[i] != ch:
            z[k] = a[i]
            k += 1
            i += 1
            continue
        j = _run_end(a, i)
        if not (i > 0 and j < m and _in(a[i - 1], lo, hi) and _in(a[j], lo, hi)):
            for _ in range(j - i):
                z[k] = 32
                k += 1
        i = j
    return z[:k]


@njit(cache=True, nogil=True)
def _digits_apart(z):
    """A space on both sides of each run of Persian digits (U+06F0..U+06F9)."""
    m = len(z)
    b = np.empty(3 * m, dtype=np.uint32)
    k = 0
    i = 0
    while i < m:
        if _in(z[i], 0x6F0, 0x6F9):
            b[k] = 32
            k += 1
            while i < m and _in(z[i], 0x6F0, 0x6F9):
                b[k] = z[i]
                k += 1
                i += 1
            b[k] = 32
        else:
            b[k] = z[i]
            i += 1
        k += 1
    return b[:k]


@njit(cache=True, nogil=True)
def _joined_letters(b):
    """Each run of spaces between two letters U+0621..U+06D5 dropped."""
    return _runs_between(b, 32, 0x621, 0x6D5)


@njit(cache=True, nogil=True)
def _two_repeats(s):
    """Each run of one letter U+0621..U+06D5 three times or more cut to two."""
    k = len(s)
    t = np.empty(k, dtype=np.uint32)
    m = 0
    run = 0  # how many times the character before ends its run so far
    prev = np.uint32(0)
    for i in range(k):
        c = s[i]
        run = run + 1 if i > 0 and c == prev else 1
        prev = c
        t[m] = c  # kept unless it is the third or later of a run of one letter (written, then not counted)
        m += np.int64(run <= 2 or not _in(c, 0x621, 0x6D5))
    return t[:m]


@njit(cache=True, nogil=True)
def _anchor_cuts(t, first, second):
    """A space before each position holding a ``first`` letter followed by a ``second`` one
    (both bool arrays indexed by code point up to U+0700, False there: a code point above
    reads that entry). Branch-free: a space is written before every character and kept
    where the pair is an anchor."""
    m = len(t)
    out = np.empty(2 * m + 1, dtype=np.uint32)
    k = 0
    for i in range(m - 1):
        out[k] = 32
        k += np.int64(first[min(t[i], 0x700)]) & np.int64(second[min(t[i + 1], 0x700)])
        out[k] = t[i]
        k += 1
    if m:
        out[k] = t[m - 1]
        k += 1
    return out[:k]
