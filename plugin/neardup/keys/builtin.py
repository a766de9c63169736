"""The built-in signatures, one :class:`~neardup.keys.signature.Signature` each, in one
table, :data:`BUILTIN` (name -> class). Config (the names, the defaults), the signer (the
keys), the candidate rule (who proposes candidates, how many keys they share), the key
encoding (positional keys) and the evaluation read it; no other list of their names exists.

* ``exact``    one key: the first 64 bits of xxh3-128 over the canonical token hashes in
  order (full duplicates)
* ``minhash``  b LSH band keys of the MinHash sketch (:mod:`neardup.sketches.lsh`), positional
* ``simhash``  keys of pairs of k + 2 blocks of the 64-bit SimHash
  (:mod:`neardup.sketches.simhash`), positional
* ``winnow``   winnowing fingerprints of the shingle sequence (Schleimer et al. 2003;
  containment)
* ``modm``     Broder's MOD_m sample of the shingle set (optional; containment)

Each signature's keys have two forms: :meth:`~Builtin.parts` of one prepared document, the
reference, and :meth:`~Builtin.batch`, the same keys of a whole batch at once, which the
signer runs (tests/test_builtin_signatures.py holds them equal).

>>> [name for name, sig in BUILTIN.items() if sig.default]
['exact', 'minhash', 'simhash', 'winnow']
>>> [name for name, sig in BUILTIN.items() if sig.positional]
['minhash', 'simhash']
"""

from __future__ import annotations

import abc
import itertools
from typing import Any, Protocol

import numpy as np
import xxhash

from ..sketches.hashing import U64
from ..sketches.lsh import band_keys, band_keys_many
from ..sketches.ragged import offsets_of, segment_unique
from ..sketches.sampling import mod_sample, winnow, winnow_many
from ..sketches.simhash import agreeing_blocks, block_keys, block_keys_many, token_simhash
from .signature import Signature


def exact_key(token_hashes: np.ndarray) -> str:
    """The exact signature: xxh3-128 (hex) of the document's canonical token hashes, in order,
    as little-endian 64-bit integers (two documents with the same canonical token stream
    share it; a wordless document hashes the empty string).

    >>> from neardup.sketches.hashing import hash_strings
    >>> a_rose, rose_a = hash_strings(["a", "rose"], 1), hash_strings(["rose", "a"], 1)
    >>> exact_key(a_rose) == exact_key(hash_strings(["a", "rose"], 1)) != exact_key(rose_a)
    True
    """
    return exact_keys(token_hashes, np.array([0, len(token_hashes)]))[0]


def exact_keys(token_hashes: np.ndarray, offsets: np.ndarray) -> list[str]:
    """:func:`exact_key` of each document's token hashes (document i's at
    ``offsets[i]:offsets[i+1]``), hashed from slices of one buffer.

    >>> from neardup.sketches.hashing import hash_strings
    >>> th = hash_strings(["a", "rose", "is"], 1)
    >>> exact_keys(th, np.array([0, 2, 3])) == [exact_key(th[:2]), exact_key(th[2:])]
    True
    """
    buf = memoryview(np.ascontiguousarray(token_hashes, dtype="<u8")).cast("B")
    bounds = (np.asarray(offsets, dtype=np.int64) * 8).tolist()
    return [xxhash.xxh3_128_hexdigest(buf[a:b]) for a, b in itertools.pairwise(bounds)]


class Stages(Protocol):
    """What the signer has made of a batch when the built-in keys are made: shingle hashes in
    document order (``sequence``, ragged by ``seq_offsets``), the sorted distinct ones
    (``sets``, by ``set_offsets``), the MinHash sketches (D x K) and SimHash fingerprints (D),
    and the exact digests (hex, one a document)."""

    sequence: np.ndarray
    seq_offsets: np.ndarray
    sets: np.ndarray
    set_offsets: np.ndarray
    sketches: np.ndarray
    simhash: np.ndarray
    exacts: list[str]


#: A batch's keys of one signature: (values, each document's offsets into them), or
#: (a D x n matrix, None) for a fixed number of keys a document.
BatchKeys = tuple[np.ndarray, "np.ndarray | None"]


class Builtin(Signature):
    """A built-in signature of one index's config.

    ``default``: in ``Config.signatures`` unless chosen otherwise; ``positional``: key i
    only matches key i of another document (written ``"i:hex"``,
    :mod:`neardup.keys.encoding`); ``resemblance``: its shared keys propose candidates
    for resemblance; ``containment``: for containment, sharing ``min_match`` keys as for
    resemblance; ``sample``: a sample of the shingle set, which proposes containment
    candidates sharing a fraction of its keys (``Config.containment_fraction``).
    """

    default: bool = True
    positional: bool = False
    resemblance: bool = True
    containment: bool = True
    sample: bool = False

    def __init__(self, config: Any, context: Any = None):
        self.config = config
        self.components = (self.name,)

    @abc.abstractmethod
    def batch(self, st: Stages) -> BatchKeys:
        """The keys of every document of a batch (see :data:`BatchKeys`)."""


class Exact(Builtin):
    """Full duplicates: the first 64 bits of :func:`exact_key`."""

    name = "exact"

    def parts(self, p) -> dict[str, np.ndarray]:
        return {self.name: np.array([int(exact_key(p.token_hashes)[:16], 16)], dtype=U64)}

    def batch(self, st: Stages) -> BatchKeys:
        values = np.array([int(e[:16], 16) for e in st.exacts], dtype=U64)
        return values, np.arange(len(st.exacts) + 1)


class MinHashBands(Builtin):
    """b LSH band keys of the MinHash sketch; a candidate shares ``Config.min_match`` of them
    (P[Binomial(b, s^r) >= m], :mod:`neardup.sketches.lsh`)."""

    name = "minhash"
    positional = True

    def __init__(self, config: Any, context: Any = None):
        super().__init__(config, context)
        self.min_match = int(config.min_match)  # (resolved by Config: >= 1)

    def parts(self, p) -> dict[str, np.ndarray]:
        c = self.config
        return {self.name: band_keys(p.minhash.hashvalues, c.bands, c.rows)}

    def batch(self, st: Stages) -> BatchKeys:
        return band_keys_many(st.sketches, self.config.bands, self.config.rows), None


class SimHashBlocks(Builtin):
    """Keys of pairs of k + 2 blocks of the token SimHash: documents within Hamming distance
    k share one (Manku et al. 2007); a candidate proposed by them alone is checked against
    k."""

    name = "simhash"
    positional = True
    containment = False  # it measures the whole document

    def parts(self, p) -> dict[str, np.ndarray]:
        c = self.config
        fingerprint = token_simhash(p.token_hashes)
        return {self.name: block_keys(fingerprint, c.simhash_k, agreeing_blocks(c.version))}

    def batch(self, st: Stages) -> BatchKeys:
        c = self.config
        return block_keys_many(st.simhash, c.simhash_k, agreeing_blocks(c.version)), None


class Winnowing(Builtin):
    """The distinct winnowing fingerprints of the shingle sequence, window
    ``Config.winnow_window``: a shared run of that many shingles shares one."""

    name = "winnow"
    resemblance = containment = False
    sample = True

    def parts(self, p) -> dict[str, np.ndarray]:
        return {self.name: np.unique(winnow(p.shingles.sequence, self.config.winnow_window))}

    def batch(self, st: Stages) -> BatchKeys:
        found = winnow_many(st.sequence, st.seq_offsets, self.config.winnow_window)
        return segment_unique(*found, compiled=True)


class ModM(Builtin):
    """Broder's MOD_m sample of the shingle set (the hashes divisible by ``Config.mod_m``)."""

    name = "modm"
    default = False
    resemblance = containment = False
    sample = True

    def parts(self, p) -> dict[str, np.ndarray]:
        return {self.name: mod_sample(p.shingles.set, self.config.mod_m)}

    def batch(self, st: Stages) -> BatchKeys:
        keep = st.sets % np.uint64(self.config.mod_m) == 0
        return st.sets[keep], offsets_of(keep)[st.set_offsets]


#: The built-in signatures by name, in the order their keys are made and stored.
BUILTIN: dict[str, type[Builtin]] = {
    sig.name: sig for sig in (Exact, MinHashBands, SimHashBlocks, Winnowing, ModM)
}
