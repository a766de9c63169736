"""Signing: raw text -> canonical tokens -> shingles -> every signature neardup stores.

Each signature is a set of 64-bit keys stored as a keyword field and matched by term
queries in the engine:

* ``exact``    one key: xxh3-128 of the canonical token stream (full duplicates)
* ``minhash``  b LSH band keys of the MinHash sketch (:mod:`neardup.lsh`)
* ``simhash``  k+1 block keys of the 64-bit SimHash (:mod:`neardup.simhash`)
* ``winnow``   winnowing fingerprints of the shingle sequence (containment)
* ``modm``     Broder's MOD_m sample of the shingle set (optional; containment)

plus any signature of the extended family registered in :mod:`neardup.signatures`.
Positional keys (band i, block i) are rendered as ``"i:hex"`` keywords; set-like keys as
``"hex"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import xxhash

from .canonical import Canonicalizer
from .config import BUILTIN_SIGNATURES, Config
from .hashing import U64, hash_strings
from .lsh import band_keys
from .minhash import MinHash
from .sampling import mod_sample, winnow
from .shingles import Shingles, char_shingles, from_units
from .simhash import block_keys, token_simhash

#: Fields whose keys are positional (band / block number matters for the keyword).
POSITIONAL = {"minhash", "simhash"}


@dataclass
class Document:
    """A document to index or query: id, text and whatever else the user keeps."""

    id: str
    text: str
    title: str | None = None
    lang: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prepared:
    """Intermediate results one signature may need (canonical tokens, hashes, sketch)."""

    text: str
    tokens: list[str]
    lang: str
    token_hashes: np.ndarray
    shingles: Shingles
    minhash: MinHash
    config: Config
    context: dict[str, Any]


@dataclass
class Signed:
    """Everything neardup stores for one document."""

    doc: Document
    lang: str
    n_tokens: int
    shingles: np.ndarray  # sorted distinct uint64 shingle hashes, S(A, w)
    exact: str
    simhash: int
    keys: dict[str, np.ndarray]  # field -> uint64 keys

    @property
    def id(self) -> str:
        return self.doc.id

    @property
    def n_shingles(self) -> int:
        return len(self.shingles)

    def keywords(self, field_name: str) -> list[str]:
        return render_keys(field_name, self.keys.get(field_name, np.empty(0, dtype=U64)))


def render_keys(field_name: str, keys: np.ndarray) -> list[str]:
    """Keyword strings for an engine: ``"i:hex"`` for positional fields, ``"hex"`` else."""
    if field_name in POSITIONAL:
        return [f"{i}:{int(k):016x}" for i, k in enumerate(keys)]
    return [f"{int(k):016x}" for k in keys]


def parse_keyword(kw: str) -> int:
    return int(kw.rsplit(":", 1)[-1], 16)


class Signer:
    """Signs documents with the settings of one index.

    ``context`` carries collection-level data that some signatures need (the I-Match
    lexicon, idf tables); engines store it next to the config. ``extra_signatures`` maps
    each signature of the extended family in use to its object (callable, ``min_match``).
    """

    def __init__(self, config: Config, context: dict[str, Any] | None = None):
        self.config = config
        self.canonicalizer = Canonicalizer(config)
        self.context = context or {}
        self.extra_signatures: dict[str, Any] = {}
        extra = [s for s in config.signatures if s not in BUILTIN_SIGNATURES]
        if extra:
            from .signatures import REGISTRY

            for name in extra:
                self.extra_signatures[name] = REGISTRY[name](config, self.context)

    def prepare(self, text: str, lang: str | None = None) -> Prepared:
        c = self.config
        canon = self.canonicalizer.canonicalize(text, lang)
        th = hash_strings(canon.tokens, c.seed)
        w = c.shingle_size_for(canon.lang)
        sh = char_shingles(canon.tokens, w, c.seed) if c.shingle == "char" else from_units(th, w)
        mh = MinHash.from_shingles(sh.set, c.num_perm, c.seed, c.minhash_scheme)
        return Prepared(text, canon.tokens, canon.lang, th, sh, mh, c, self.context)

    def sign(self, doc: Document | str, lang: str | None = None) -> Signed:
        if isinstance(doc, str):
            doc = Document(id="", text=doc, lang=lang)
        p = self.prepare(doc.text, doc.lang or lang)
        c = self.config
        sim = token_simhash(p.token_hashes)
        exact = xxhash.xxh3_128_hexdigest("\x1f".join(p.tokens).encode())
        keys: dict[str, np.ndarray] = {}
        if "exact" in c.signatures:
            keys["exact"] = np.array([int(exact[:16], 16)], dtype=U64)
        if "minhash" in c.signatures:
            keys["minhash"] = band_keys(p.minhash.hashvalues, c.bands, c.rows)
        if "simhash" in c.signatures:
            keys["simhash"] = block_keys(sim, c.simhash_k)
        if "winnow" in c.signatures:
            keys["winnow"] = np.unique(winnow(p.shingles.sequence, c.winnow_window))
        if "modm" in c.signatures:
            keys["modm"] = mod_sample(p.shingles.set, c.mod_m)
        for name, sig in self.extra_signatures.items():
            keys[name] = np.asarray(sig(p), dtype=U64)
        return Signed(doc, p.lang, len(p.tokens), p.shingles.set, exact, sim, keys)

    def sign_many(self, docs: Iterable[Document]) -> Iterator[Signed]:
        for d in docs:
            yield self.sign(d)
