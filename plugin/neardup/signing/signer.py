"""Signing: raw text -> canonical tokens -> shingles -> every signature neardup stores.

Each signature is a set of 64-bit keys stored as a keyword field and matched by term
queries in the engine: the built-in ones of :data:`neardup.keys.builtin.BUILTIN` (exact,
MinHash bands, SimHash blocks, winnowing, MOD_m), made for a whole batch at once, and any
of the extended family registered in :mod:`neardup.keys.registry`. Positional keys (band
i, block i) are rendered as ``"i:hex"`` keywords; set-like keys as ``"hex"``
(:mod:`neardup.keys.encoding`).

A document without a single canonical token (``!!!``, ``<p></p>``, only stop words) is
*wordless*: it has no shingles and no key of the built-in signatures (no exact key, no band,
block or sample keys), so those never make it a candidate; signatures of the extended family
that read the raw text (Kosinov's punctuation strings) keep their keys, but every candidate
is verified on shingles and a similarity with an empty set is 0
(:mod:`neardup.sketches.verify`), so a wordless document is never a near-duplicate of
anything. It is stored and found by full-text search. Before signing, every document of a
batch is checked by :func:`neardup.signing.validate.check_document`; a document it refuses
is left out and reported, and the rest of the batch is signed.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..canonical import Canonical, Canonicalizer
from ..canonical.flags import SURROGATE, text_flags_many
from ..canonical.spans import TextOrSpan
from ..config import Config
from ..sketches.hashing import U64, hash_strings
from ..sketches.minhash import MinHash, kperm_sketch, oph_many
from ..sketches.ragged import join, offsets_of, segment_unique, split
from ..keys.registry import REGISTRY
from ..sketches.shingles import Shingles, char_units, combine_many
from ..sketches.simhash import token_simhash_many
from ..keys.builtin import BUILTIN, exact_keys
from .records import Document, Signed
from .validate import InvalidDocument, check_documents


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


def _per_document(
    docs: Sequence[Document],
    on_error: Callable[[Document, Exception], None] | None,
    fn: Callable[[int, Document], Any],
) -> tuple[list[Document], list[Any]]:
    """``fn(i, docs[i])`` of each document, and the documents it was made for: one for which it
    raises ValueError or TypeError goes to ``on_error`` (raised when that is None) and is
    left out; the others go on."""
    kept, made = [], []
    for i, d in enumerate(docs):
        try:
            made.append(fn(i, d))
        except (ValueError, TypeError) as e:
            if on_error is None:
                raise
            on_error(d, e)
            continue
        kept.append(d)
    return kept, made


class Signer:
    """Signs documents with the settings of one index.

    ``context`` carries collection-level data that some signatures need (the I-Match
    lexicon, idf tables); engines store it next to the config. ``extra_signatures`` maps
    each signature of the extended family in use to its object (callable, ``min_match``).
    """

    def __init__(
        self,
        config: Config,
        context: dict[str, Any] | None = None,
        *,
        extended: bool = True,
        canonicalizer: Canonicalizer | None = None,
    ):
        """``extended`` False leaves out the extended family's signatures (no collection
        statistics needed): what :meth:`shingle_sets` needs, whatever the settings.
        ``canonicalizer``: the one of ``config`` where the caller made it (to build the
        context); the signer holds it and makes the family's signatures with it."""
        self.config = config
        self.canonicalizer = canonicalizer or Canonicalizer(config)
        self.context = context or {}
        self.extra_signatures: dict[str, Any] = {}
        #: the built-in signatures of the config, in the order their keys are stored
        self.builtin = [sig(config) for name, sig in BUILTIN.items() if name in config.signatures]
        extra = [s for s in config.signatures if s not in BUILTIN]
        for name in extra if extended else ():
            self.extra_signatures[name] = REGISTRY[name](self.canonicalizer, self.context)

    def warm_up(self, compiled: bool = True) -> None:
        """Make now what signing makes on first use, so that worker processes forked after it
        share it: the lookup tables (code points, NFKC, the stop words of en and ru, from a
        short text of Latin and Cyrillic words) and, with ``compiled``, the loops run once
        (:mod:`neardup.sketches.loops`: their C modules load in milliseconds); hazm (Persian)
        stays unloaded."""
        text = "Warm up, ﬁle № 1\u0967: ёлка и the end"
        if compiled:
            self._sign_docs([Document("", text)], None, check=False)
        else:  # (the numpy forms of the maps: the same tables)
            self.canonicalizer.warm_up(
                *Canonicalizer(self.config, backend="reference").text_and_language(text)
            )

    def prepare(self, text: str, lang: str | None = None) -> Prepared:
        canon = self.canonicalizer.canonicalize(text, lang)
        return self._stages([text], *_hashed([canon], self.config.seed), [canon], prepared=True)[1][
            0
        ]

    def sign(self, doc: Document | str, lang: str | None = None) -> Signed:
        if isinstance(doc, str):
            doc = Document(id="", text=doc, lang=lang)
        if lang and not doc.lang:
            doc = dataclasses.replace(doc, lang=lang)
        return self._sign_docs([doc], None, check=False)[0]

    def canonical(self, doc: Document) -> Canonical:
        """The canonical tokens and language that :meth:`sign` signs ``doc`` by: its own
        ``tokens`` where it brings them, else its text canonicalized (:meth:`sign_canonical`
        of them is :meth:`sign` of it)."""
        if doc.tokens is None:
            return self.canonicalizer.canonicalize(doc.text, doc.lang)
        lang = doc.lang or self.canonicalizer.languages([" ".join(doc.tokens)], [None])[0]
        return Canonical(list(doc.tokens), lang)

    def _hashes_tokens(self, docs: Sequence[Document]) -> bool:
        """Whether a batch's tokens go from text to hashes without strings: nothing of its
        signing needs the token strings (stems, character shingles, the extended family)
        and no document brings its own tokens."""
        return (
            self.canonicalizer.hashes_tokens
            and self.config.shingle == "word"
            and not self.extra_signatures
            and all(d.tokens is None for d in docs)
        )

    def sign_batch(
        self,
        docs: Sequence[Document],
        on_error: Callable[[Document, Exception], None] | None = None,
        *,
        checked: bool = False,
    ) -> list[Signed]:
        """:meth:`sign` of many documents, with every stage after the text steps run over
        the whole batch at once (:mod:`neardup.sketches.ragged`), tokens hashed straight from the
        canonical texts where nothing needs them as strings
        (:meth:`~neardup.canonical.Canonicalizer.token_hashes_many`); the results are those
        of :meth:`sign`. A document that :func:`~neardup.signing.validate.check_document` refuses or
        that cannot be canonicalized goes to ``on_error`` (raised when it is None) and is
        left out; the others are signed. ``checked``: every document passed
        ``check_document`` already (as those of :func:`neardup.io.reading.read_documents`), so it is
        not run again."""
        return self._sign_docs(docs, on_error, check=not checked)

    def _sign_docs(
        self,
        docs: Sequence[Document],
        on_error: Callable[[Document, Exception], None] | None,
        check: bool,
    ) -> list[Signed]:
        """:meth:`sign_batch`; ``check`` False signs without
        :func:`~neardup.signing.validate.check_documents` (a query text is no document to store)."""
        hashed = self._hashes_tokens(docs)
        # the scan of the text steps finds lone surrogates too: validation need not encode the texts
        flags = (
            text_flags_many(
                [d.text if isinstance(d.text, str) else "" for d in docs],
                self.canonicalizer.backend,
            ).tolist()
            if hashed
            else [SURROGATE] * len(docs)
        )

        problems = (
            check_documents(docs, [not f & SURROGATE for f in flags])
            if check
            else [None] * len(docs)
        )

        def checked(
            i: int, d: Document
        ) -> Any:  # its flags, or its canonical tokens where they are strings
            if problems[i]:
                raise InvalidDocument(problems[i])
            return flags[i] if hashed else self.canonical(d)

        kept, made = _per_document(docs, on_error, checked)
        if not hashed:
            return self.sign_canonical(kept, made)
        kept, canon = self._texts_for_tokens(kept, made, on_error)
        langs = self.canonicalizer.languages([d.text for d in kept], [d.lang for d in kept])
        th, off = self.canonicalizer.token_hashes_many(canon, langs)
        return self._sign(kept, th, off, langs)

    def shingle_sets(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """The sorted shingle set of each document, equal to its ``Signed.shingles`` from
        :meth:`sign_batch`, made without sketches, SimHash or keys: a stored document's
        shingle hashes follow from its text, language as given and the index's settings,
        so an engine may keep the text alone and make them again where exact verification
        needs them. The documents were checked when they were signed; one that no longer
        signs raises. The extended family's signatures never change the shingles (a
        signer without them, ``extended=False``, makes the same)."""
        if not docs:
            return []
        if not self._hashes_tokens(docs):
            return [s.shingles for s in self.sign_batch(docs, checked=True)]
        flags = text_flags_many([d.text for d in docs], self.canonicalizer.backend).tolist()
        kept, canon = self._texts_for_tokens(list(docs), flags, None)
        langs = self.canonicalizer.languages([d.text for d in kept], [d.lang for d in kept])
        th, off = self.canonicalizer.token_hashes_many(canon, langs)
        w = np.array([self.config.shingle_size_for(lang) for lang in langs], dtype=np.int64)
        sets, set_off = segment_unique(*combine_many(th, off, w), compiled=True)
        return split(sets, set_off)

    def _texts_for_tokens(
        self,
        docs: Sequence[Document],
        flags: Sequence[int],
        on_error: Callable[[Document, Exception], None] | None,
    ) -> tuple[list[Document], list[TextOrSpan]]:
        """The documents that canonicalize and their texts for tokens
        (:meth:`~neardup.canonical.Canonicalizer.spans_for_tokens`, all at once); where that
        fails, one document at a time, so that the one that fails (to ``on_error``) costs
        no other."""
        try:
            return list(docs), self.canonicalizer.spans_for_tokens(
                [d.text for d in docs], [d.lang for d in docs], flags
            )
        except (ValueError, TypeError):
            if on_error is None and len(docs) == 1:
                raise
        return _per_document(
            docs, on_error, lambda _, d: self.canonicalizer.spans_for_tokens([d.text], [d.lang])[0]
        )

    def sign_canonical(self, docs: Sequence[Document], canon: Sequence[Canonical]) -> list[Signed]:
        """Sign documents whose canonical tokens are already known (``canon[i]`` of ``docs[i]``)."""
        return self._sign(docs, *_hashed(canon, self.config.seed), canon)

    def _sign(
        self,
        docs: Sequence[Document],
        th: np.ndarray,
        off: np.ndarray,
        langs: Sequence[str],
        canon: Sequence[Canonical] | None = None,
    ) -> list[Signed]:
        """Sign documents from their token hashes (document i's at ``off[i]:off[i+1]``);
        ``canon``, the tokens as strings, where character shingles or the extended family need
        them."""
        st, prepared = self._stages(
            [d.text for d in docs], th, off, langs, canon, prepared=bool(self.extra_signatures)
        )
        c = self.config
        exacts = st.exacts
        fields = self._field_keys(st)
        counts = np.diff(off).tolist()
        set_off, simhashes = st.set_offsets.tolist(), st.simhash.tolist()
        short = too_short(
            np.diff(st.seq_offsets),
            np.array([c.shingle_size_for(lang) for lang in langs], dtype=np.int64),
        ).tolist()
        out = []
        for i, (d, lang, exact, n_tokens) in enumerate(
            zip(docs, langs, exacts, counts, strict=True)
        ):
            # wordless: no key of the built-in signatures, so never their candidate
            k = {f: _nth(v, o, i) if n_tokens else np.empty(0, dtype=U64) for f, v, o in fields}
            for name, sig in self.extra_signatures.items():
                k[name] = np.asarray(sig(prepared[i]), dtype=U64)
            out.append(
                Signed(
                    doc=d,
                    lang=lang,
                    n_tokens=n_tokens,
                    shingles=st.sets[set_off[i] : set_off[i + 1]],
                    exact=exact,
                    simhash=simhashes[i],
                    keys=k,
                    too_short=short[i],
                )
            )
        return out

    def _field_keys(self, st: _Stages) -> list[tuple[str, np.ndarray, list[int] | None]]:
        """The keys of each built-in signature of the config for a whole batch, in the order
        stored (:data:`~neardup.keys.builtin.BUILTIN`'s): (field, values, each document's
        offsets into them, or None where ``values`` is a D x n matrix)."""
        out = []
        for sig in self.builtin:
            values, offsets = sig.batch(st)
            out.append((sig.name, values, None if offsets is None else offsets.tolist()))
        return out

    def _stages(
        self,
        texts: Sequence[str],
        th: np.ndarray,
        off: np.ndarray,
        langs: Sequence[str],
        canon: Sequence[Canonical] | None,
        prepared: bool,
    ) -> tuple["_Stages", list[Prepared]]:
        """Shingles, shingle sets, sketches and SimHash of a batch (ragged) from its token
        hashes."""
        c = self.config
        w = np.array([c.shingle_size_for(lang) for lang in langs], dtype=np.int64)
        if c.shingle == "char":
            assert canon is not None, "character shingles are made from the token strings"
            units = [char_units(x.tokens, c.seed) for x in canon]
            seq, seq_off = combine_many(*join(units), w)
        else:
            seq, seq_off = combine_many(th, off, w)
        sets, set_off = segment_unique(seq, seq_off, compiled=True)
        sketches = self._sketches(sets, set_off)
        st = _Stages(
            sequence=seq,
            seq_offsets=seq_off,
            sets=sets,
            set_offsets=set_off,
            sketches=sketches,
            simhash=token_simhash_many(th, off),
            exacts=exact_keys(th, off),
        )
        if not prepared:
            return st, []
        assert canon is not None, "the extended family is signed from the token strings"
        return st, [
            Prepared(
                text=t,
                tokens=x.tokens,
                lang=x.lang,
                token_hashes=th[off[i] : off[i + 1]],
                shingles=Shingles(
                    seq[seq_off[i] : seq_off[i + 1]], sets[set_off[i] : set_off[i + 1]]
                ),
                minhash=MinHash(sketches[i], c.seed, c.minhash_scheme),
                config=c,
                context=self.context,
            )
            for i, (t, x) in enumerate(zip(texts, canon, strict=True))
        ]

    def _sketches(self, sets: np.ndarray, set_off: np.ndarray) -> np.ndarray:
        """The MinHash sketch of each shingle set (D x num_perm), by the configured scheme."""
        c = self.config
        if c.minhash_scheme == "oph":
            return oph_many(sets, set_off, c.num_perm, c.seed)
        if len(set_off) <= 1:
            return np.empty((0, c.num_perm), dtype=U64)
        return np.stack([kperm_sketch(s, c.num_perm, c.seed) for s in split(sets, set_off)])


def too_short(positions, w):
    """Whether a document with ``positions`` shingles in document order (n - w + 1 for n
    tokens, or characters with character shingles; 1 when 1 <= n < w) is too short for
    shingles of size ``w`` to tell texts apart: at most w of them (n < 2w). Then one
    position is inside every shingle, so one changed word changes every shingle: the
    resemblance can only say "the same canonical tokens" (1) or "not" (0), never how much
    two texts share, and a text that keeps so few canonical tokens says little about what
    it says. Works on numbers and on numpy arrays.

    >>> too_short(np.array([0, 1, 5, 6]), 5).tolist()  # 0, <= 5, 9 and 10 tokens at w = 5
    [True, True, True, False]
    """
    return positions <= w


def _hashed(canon: Sequence[Canonical], seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Token hashes, their offsets and the languages of documents given as token strings."""
    th = hash_strings(list(itertools.chain.from_iterable(x.tokens for x in canon)), seed)
    return th, offsets_of([len(x.tokens) for x in canon]), [x.lang for x in canon]


def _nth(values: np.ndarray, offsets: list[int] | None, i: int) -> np.ndarray:
    """Document i's keys: row i of a matrix (``offsets`` None), or its ragged slice."""
    return values[i] if offsets is None else values[offsets[i] : offsets[i + 1]]


@dataclass
class _Stages:
    sequence: np.ndarray  # shingle hashes in document order, all documents
    seq_offsets: np.ndarray
    sets: np.ndarray  # sorted distinct shingle hashes per document
    set_offsets: np.ndarray
    sketches: np.ndarray  # (D, num_perm)
    simhash: np.ndarray  # (D,) uint64
    exacts: list[str]  # xxh3-128 (hex) of each document's token hashes
