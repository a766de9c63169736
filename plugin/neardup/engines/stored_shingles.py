"""The ``shingles`` field every engine stores: a document's shingle hashes, or what makes them.

Exact verification needs each candidate's full set of shingle hashes, 8 bytes apiece: about
3.5 KB for a document of 550 words, more than everything else the index keeps of it beyond
the text. Random 64-bit hashes do not compress, but they follow from what is stored already:
the text, the language the document was signed with as given, and the index's settings
(:meth:`neardup.signing.signer.Signer.shingle_sets` makes them exactly as signing did). So the
field holds either

* the sorted hashes as a little-endian uint64 BLOB, ``8 * n_shingles`` bytes: documents that
  brought their own tokens, and documents of fewer than :data:`MIN_MADE` shingles, which the
  blob costs little; or
* a marker, ``b"T"`` and the language the document was given (UTF-8, empty when it was
  detected): the hashes are made again from the text when they are read. A marker is
  shorter than ``8 * n_shingles`` bytes, so the length tells the two apart.

What is made again is kept in a bounded cache (:class:`ShingleCache`), as are the sets of
documents as they are stored, so verifying a document against recent arrivals does not
canonicalize them again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Hashable, Sequence

import numpy as np

from ..config import Config
from ..sketches.hashing import U64
from ..signing.records import Document, Signed

if TYPE_CHECKING:
    from ..signing.signer import Signer

#: Documents with fewer shingles keep their hashes (a marker would save little).
MIN_MADE = 16
_MARK = b"T"


def column(s: Signed) -> bytes:
    """The column of a signed document: a marker where its shingles follow from its text.

    >>> from neardup import Config, Signer
    >>> words = " ".join(f"w{i}" for i in range(20))
    >>> column(Signer(Config(shingle_size=1)).sign(Document("a", words, lang="en")))
    b'Ten'
    >>> len(column(Signer(Config()).sign(Document("b", "a few words only"))))
    8
    """
    shingles = np.ascontiguousarray(s.shingles, dtype="<u8")
    if s.doc.tokens is None and len(shingles) >= MIN_MADE:
        mark = _MARK + (s.doc.lang or "").encode("utf-8")
        if len(mark) < 8 * len(shingles):
            return mark
    return shingles.tobytes()


def is_marker(blob: bytes, n_shingles: int) -> bool:
    """Whether a column value is a marker (not ``8 * n_shingles`` bytes of hashes)."""
    return len(blob) != 8 * n_shingles


def stored_hashes(blob: bytes) -> np.ndarray:
    """The hashes of a column value that holds them."""
    return np.frombuffer(blob, dtype="<u8").astype(U64)


class ShingleCache:
    """Shingle sets by key, the most recently used kept up to ``max_bytes`` of hashes (LRU)."""

    def __init__(self, max_bytes: int = 32 << 20):
        self.max_bytes = max_bytes
        self.bytes = 0
        self._sets: OrderedDict[Hashable, np.ndarray] = OrderedDict()

    def get(self, key: Hashable) -> np.ndarray | None:
        found = self._sets.get(key)
        if found is not None:
            self._sets.move_to_end(key)
        return found

    def put(self, key: Hashable, shingles: np.ndarray) -> None:
        if shingles.nbytes > self.max_bytes:
            return
        old = self._sets.pop(key, None)
        if old is not None:
            self.bytes -= old.nbytes
        self._sets[key] = shingles
        self.bytes += shingles.nbytes
        while self.bytes > self.max_bytes:
            _, dropped = self._sets.popitem(last=False)
            self.bytes -= dropped.nbytes

    def __len__(self) -> int:
        return len(self._sets)


class StoredShingles:
    """Reads the field for one index: stored hashes as they are, markers made again from
    the text (all of a read at once) through the cache. A cache key must determine the
    shingles: the engine uses (exact digest of the tokens, language).

    Markers are made again by the index's signer, given by its owner (:meth:`use`, called
    through :meth:`neardup.engines.base.Engine.use_signer`), so a process canonicalizes with
    one signer; an engine used on its own makes a shingles-only one at its first marker."""

    #: Texts canonicalized together (larger batches of long texts cost more per text).
    batch = 500

    def __init__(self, config: Config, cache: ShingleCache | None = None):
        self.config = config
        self.cache = ShingleCache() if cache is None else cache
        self._signer: Signer | None = None

    def use(self, signer: Signer) -> None:
        """Make markers' shingles again with ``signer`` (one of this index's settings)."""
        self._signer = signer

    def remember(self, key: Hashable, shingles: np.ndarray) -> None:
        """Keep the set of a document as it is stored (its key as it will be read)."""
        self.cache.put(key, np.asarray(shingles, dtype=U64))

    def cached(self, key: Hashable) -> np.ndarray | None:
        """The set the cache holds by ``key`` (None: not held, or no longer)."""
        return self.cache.get(key)

    def sets(
        self,
        rows: Sequence[tuple[Hashable, bytes, int, str | None]],
    ) -> list[np.ndarray]:
        """The shingle set of each row ``(key, column value, n_shingles, text)``."""
        out: list[np.ndarray | None] = [None] * len(rows)
        todo: list[int] = []
        for i, (key, blob, n, _) in enumerate(rows):
            if not is_marker(blob, n):
                out[i] = stored_hashes(blob)
                continue
            out[i] = self.cache.get(key)
            if out[i] is None:
                todo.append(i)
        for start in range(0, len(todo), self.batch):
            some = todo[start : start + self.batch]
            for i, made in zip(some, self._made_again([rows[i] for i in some]), strict=True):
                out[i] = made
        return out  # type: ignore[return-value]

    def _made_again(
        self, rows: Sequence[tuple[Hashable, bytes, int, str | None]]
    ) -> list[np.ndarray]:
        """The shingle sets of marker ``rows`` made again from their texts (and cached); a
        text that makes another number of shingles than was stored is refused."""
        if self._signer is None:
            from ..signing.signer import Signer  # (on first use: reading loads no signing)

            self._signer = Signer(self.config, extended=False)  # (no signer was given)
        docs = [
            Document(str(key), text or "", lang=given_lang(blob)) for key, blob, _, text in rows
        ]
        made_sets = self._signer.shingle_sets(docs)
        for (key, _, n, _), made in zip(rows, made_sets, strict=True):
            if len(made) != n:
                raise ValueError(
                    f"document {key}: its text makes {len(made)} shingles, {n} were stored"
                )
            self.cache.put(key, made)
        return made_sets


def given_lang(mark: bytes) -> str | None:
    """The language a marker records (None: it was detected).

    >>> given_lang(b"Tfa"), given_lang(b"T")
    ('fa', None)
    """
    return mark[len(_MARK) :].decode("utf-8") or None
