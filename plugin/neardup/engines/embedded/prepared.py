"""What the signing workers make of a batch for the embedded engine, so that the process that
tags and stores only writes: each document's keys column (:mod:`.keycolumn`) and, where the
index has full-text search, the words of its title and body for the full-text index
(:func:`~neardup.canonical.search.search_text`, the analysis a search's words get too).

>>> from neardup.signing.records import Document
>>> class S:  # the little of a signed document this reads
...     id, doc = "a", Document("a", "Файлами and FILES", title="Title")
>>> fulltext_words([S()])
{'a': ('titl', 'файл and file')}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...signing.records import Signed
from ..base import PreparedBatch
from .keycolumn import KeyColumns, prepare_key_columns


@dataclass(frozen=True)
class PreparedRows(PreparedBatch):
    """A signed batch's keys columns and, by document id, the full-text words of its title
    and body (empty when the index has no full-text search)."""

    keys: KeyColumns
    words: dict[str, tuple[str, str]]


def fulltext_words(signed: Sequence[Signed]) -> dict[str, tuple[str, str]]:
    """Each document's (title, body) as the full-text index holds them, by id."""
    # (imported here: an index opened to be read loads no canonicalization)
    from ...canonical.search import search_text

    return {s.id: (search_text(s.doc.title), search_text(s.doc.text)) for s in signed}


def prepare_rows(fields: tuple[str, ...], fulltext: bool, signed: Sequence[Signed]) -> PreparedRows:
    """:class:`PreparedRows` of ``signed`` for an index of ``fields``, with full-text search
    or not: :meth:`~.engine.EmbeddedEngine.batch_preparer`."""
    return PreparedRows(
        keys=prepare_key_columns(fields, signed),
        words=fulltext_words(signed) if fulltext else {},
    )
