"""The engine interface: what neardup needs from a store of signed documents.

Two implementations: :class:`neardup.engines.embedded.EmbeddedEngine` (SQLite, the default)
and :class:`neardup.engines.elastic.ElasticEngine` (Elasticsearch 8/9, OpenSearch 2/3).
Engines only store and match keys; canonicalization, signing, exact verification,
tagging and clustering are engine-agnostic and live in :mod:`neardup.api`.

A candidate query is a disjunction of key groups: a document is a candidate when, for at
least one group, it shares at least ``min_match`` of the group's keys, and its shingle
count lies in the length range. In the query DSL that is a ``bool`` with a ``range``
filter and one ``should`` clause per group (``terms`` for min_match 1, a nested
``bool.should`` of ``term`` clauses with ``minimum_should_match`` otherwise).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..config import Config
from ..signer import Signed


class EngineError(RuntimeError):
    """The engine cannot do what was asked (down, refused, not a neardup index, ...)."""


@dataclass(frozen=True)
class Tags:
    """Index-time duplicate tags of one document."""

    cluster_id: str
    dup_of: str | None = None
    max_resemblance: float = 0.0
    is_duplicate: bool = False


@dataclass(frozen=True)
class KeyGroup:
    field: str
    keys: tuple[int, ...]  # uint64 key values
    min_match: int = 1


@dataclass(frozen=True)
class CandidateQuery:
    groups: tuple[KeyGroup, ...]
    min_shingles: int = 0
    max_shingles: int = 2**62
    exclude_id: str | None = None
    limit: int = 1000


@dataclass
class Candidate:
    """A stored document that matched a candidate query (before verification)."""

    id: str
    n_shingles: int
    simhash: int
    score: float = 0.0  # number of matching keys (or the engine's score)
    shingles: np.ndarray | None = None  # engines may return them with the hit
    cluster_id: str | None = None
    matched: frozenset[str] | None = None  # signature fields that matched, when the engine tells


@dataclass
class StoredDoc:
    id: str
    lang: str
    n_shingles: int
    shingles: np.ndarray
    simhash: int
    exact: str
    keys: dict[str, np.ndarray]
    tags: Tags | None = None
    title: str | None = None
    text: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    indexed_at: str | None = None
    seq: int = 0  # arrival order: earlier documents have smaller seq


@dataclass
class Hit:
    """One full-text search result."""

    id: str
    score: float
    title: str | None
    snippet: str
    cluster_id: str | None = None
    folded: list[str] = field(default_factory=list)  # ids of near-copies folded under it


@dataclass
class Failure:
    """A document the engine refused, with the reason (nothing is dropped silently)."""

    id: str
    reason: str


@dataclass
class ClusterRecord:
    cluster_id: str
    size: int
    representative_id: str
    representative_title: str | None
    members: list[str]
    min_resemblance: float
    mean_resemblance: float
    max_resemblance: float
    languages: list[str]
    first_seen: str | None = None
    last_seen: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Engine(abc.ABC):
    """A store of signed documents with term-match candidate retrieval."""

    #: where the index lives, for messages ("neardup.db", "http://host:9200/docs")
    location: str = ""
    #: the settings of the open index (set by :meth:`open`)
    _config: Config | None = None

    @abc.abstractmethod
    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        """Open the index; create it with ``config`` (default settings) if absent.

        An existing index returns its own stored config; if ``config`` is given and
        differs, :class:`neardup.config.ConfigMismatch` is raised.
        """

    @property
    def config(self) -> Config:
        if self._config is None:
            raise EngineError("engine is not open")
        return self._config

    @abc.abstractmethod
    def get_meta(self, key: str) -> Any | None:
        """Collection-level data stored with the index (JSON-serializable)."""

    @abc.abstractmethod
    def put_meta(self, key: str, value: Any) -> None: ...

    @abc.abstractmethod
    def put(self, docs: Sequence[Signed], tags: dict[str, Tags] | None = None) -> list[Failure]:
        """Upsert signed documents (by id) with their tags; returns the refused ones."""

    @abc.abstractmethod
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Run many candidate queries at once (one round trip where the engine allows)."""

    @abc.abstractmethod
    def get(self, ids: Iterable[str], *, text: bool = False) -> dict[str, StoredDoc]:
        """Stored documents by id (missing ids are absent from the result)."""

    @abc.abstractmethod
    def delete(self, ids: Iterable[str]) -> int: ...

    @abc.abstractmethod
    def update_tags(self, tags: dict[str, Tags]) -> None: ...

    @abc.abstractmethod
    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        """Groups of >= 2 document ids that share a key of one of ``fields`` (N-to-N)."""

    @abc.abstractmethod
    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        """Every stored document, in arrival order, without loading all in memory."""

    @abc.abstractmethod
    def count(self) -> int: ...

    @abc.abstractmethod
    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        """Full-text search: words, or (HTTP engines) a query-DSL body."""

    @abc.abstractmethod
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        """Replace the stored clusters (what dashboards and reports read)."""

    @abc.abstractmethod
    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        """Stored clusters, largest first."""

    def refresh(self) -> None:
        """Make writes visible to searches (no-op where writes are visible at once)."""

    def close(self) -> None:
        """Release connections and files."""

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
