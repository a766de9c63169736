"""The engine interface: what neardup needs from a store of signed documents.

Two implementations: :class:`neardup.engines.embedded.EmbeddedEngine` (SQLite, the default)
and :class:`neardup.engines.elastic.ElasticEngine` (Elasticsearch 8/9, OpenSearch 2/3).
Engines only store and match keys; canonicalization, signing, exact verification
(:mod:`neardup.matching.candidates`), tagging (:mod:`neardup.matching.tagging`) and clustering
(:mod:`neardup.matching.clustering`) are engine-agnostic.

A candidate query is a disjunction of key groups: a document is a candidate when, for at
least one group, it shares at least ``min_match`` of the group's keys, and its shingle
count lies in the length range; most matching keys first. Each engine translates it
(:func:`neardup.engines.elastic.dsl.candidate_query`, :mod:`neardup.engines.embedded.postings`).
"""

from __future__ import annotations

import abc
import contextlib
import functools
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from ..config import OPENS_VERSIONS, SIGNATURE_VERSION, Config
from ..errors import EngineError
from ..signing.records import Signed

if TYPE_CHECKING:
    from ..signing.signer import Signer
from ..sketches.verify import UNBOUNDED


@dataclass(frozen=True, kw_only=True)
class Tags:
    """Index-time duplicate tags of one document (the cluster rule of
    :mod:`neardup.matching.tagging`).

    A duplicate has ``cluster_id`` = ``dup_of`` = its representative and
    ``max_resemblance`` = its exact resemblance to that representative (>= t). A
    representative has ``cluster_id`` = its own id, no ``dup_of`` and ``max_resemblance`` 0.
    """

    cluster_id: str
    dup_of: str | None = None
    max_resemblance: float = 0.0
    is_duplicate: bool = False


@dataclass(frozen=True)
class NativeQuery:
    """A full-text query in the engine's own language, passed to it as it is, for what words
    cannot say; engines that declare :attr:`Engine.native_queries` take it.

    >>> NativeQuery({"term": {"neardup.id": "d05"}}).body["term"]
    {'neardup.id': 'd05'}
    """

    body: Any


#: What :meth:`Engine.search` takes: words, or a :class:`NativeQuery`.
SearchQuery = str | NativeQuery


@dataclass(frozen=True)
class KeyGroup:
    """Keys of one signature field, of which a candidate holds at least ``min_match`` (>= 1:
    :func:`neardup.matching.candidates.least_match`)."""

    field: str
    keys: np.ndarray | tuple[int, ...]  # uint64 key values (an array, or a sequence of ints)
    min_match: int = 1

    def __post_init__(self) -> None:
        if self.min_match < 1:
            raise ValueError(f"a key group needs min_match >= 1, not {self.min_match}")


@dataclass(frozen=True)
class CandidateQuery:
    """Key groups (any one suffices), a length range and arrival-order filters.

    ``before_seq`` / ``after_seq`` keep documents with ``seq`` strictly below / above the
    value; ``representatives`` keeps only tagged representatives (``is_duplicate`` false).
    Engines return at most ``limit`` candidates, most matching keys first, then by ``seq``.
    """

    groups: tuple[KeyGroup, ...]
    min_shingles: int = 0
    max_shingles: int = UNBOUNDED
    exclude_id: str | None = None
    limit: int = 1000
    before_seq: int | None = None
    after_seq: int | None = None
    representatives: bool = False


@dataclass(kw_only=True)
class Candidate:
    """A stored document that matched a candidate query (before verification)."""

    id: str
    n_shingles: int
    simhash: int
    score: float = 0.0  # number of matching keys (or the engine's score)
    shingles: np.ndarray | None = None  # engines may return them with the hit
    cluster_id: str | None = None
    matched: frozenset[str] | None = None  # signature fields that matched, when the engine tells
    seq: int = 0  # arrival order of the candidate
    #: the stored title (None: it has none), where the engine read it with the hit
    #: (``title_read``); the titles of the others are read by id when they are shown
    title: str | None = None
    title_read: bool = False


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
    #: the date in the field that orders arrival (``neardup attach --order-field``), as an
    #: ISO 8601 string in UTC, where the index has one and the value is a date
    ordered_at: str | None = None
    #: too short for its shingle size to tell texts apart (:func:`neardup.signing.signer.too_short`)
    too_short: bool = False


@dataclass(frozen=True, kw_only=True)
class TagRow:
    """The light part of a stored document: what clusters, export and reports read."""

    id: str
    seq: int
    tags: Tags | None
    title: str | None = None
    lang: str | None = None
    indexed_at: str | None = None


@dataclass(kw_only=True)
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


@dataclass(kw_only=True)
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


@dataclass(frozen=True)
class PreparedBatch:
    """What an engine makes of a signed batch before storing it, where the batch is signed
    (:meth:`Engine.batch_preparer`), and takes back in :meth:`Engine.put` beside the signed
    documents: picklable, and read only by the engine of the kind that made it (a subclass
    of its own). A document it does not cover is prepared when stored."""


class PendingPut:
    """Documents handed to :meth:`Engine.start_put`: stored already, or on their way.

    :meth:`failures` waits until the engine has answered and gives the refused documents;
    an error of the write is raised there, each time it is asked. ``wait`` is what waits;
    a put that stored at once is :meth:`settled`.

    >>> p = PendingPut.settled([Failure("a", "too large")])
    >>> p.in_flight, [f.id for f in p.failures()]
    (False, ['a'])
    """

    def __init__(self, ids: Sequence[str], wait: Callable[[], list[Failure]]) -> None:
        #: the ids of the documents handed over
        self.ids = frozenset(ids)
        self._wait: Callable[[], list[Failure]] | None = wait
        self._failures: list[Failure] = []
        self._error: BaseException | None = None

    @classmethod
    def settled(cls, failures: list[Failure], ids: Sequence[str] = ()) -> PendingPut:
        """A put the engine has answered already."""
        p = cls(ids, lambda: failures)
        p.failures()
        return p

    @property
    def in_flight(self) -> bool:
        """Whether the engine may still be storing them."""
        return self._wait is not None

    def failures(self) -> list[Failure]:
        """The refused documents (after waiting for the engine's answer)."""
        if self._wait is not None:
            try:
                failures = self._wait()
            except Exception as e:  # noqa: BLE001 -- the write's own error, told each time
                self._error = e
            else:
                self._failures = failures
            self._wait = None  # (an interrupt while waiting leaves it in flight)
        if self._error is not None:
            raise self._error
        return self._failures


class Engine(abc.ABC):
    """A store of signed documents with term-match candidate retrieval."""

    #: where the index lives, for messages ("neardup.db", "http://host:9200/docs")
    location: str = ""
    #: the settings of the open index (set by :meth:`open`)
    _config: Config | None = None

    #: the field that orders arrival and dates documents (``attach --order-field``), or None
    order_field: str | None = None
    #: what creates a missing index, for the message of ``open(create=False)``
    _create_hint: str = "run 'neardup index' to create it"
    #: what to do with an index signed by another signature version, for its message
    _rebuild_hint: str = (
        "re-sign by indexing the source documents again into a new index "
        "(neardup index SOURCE -e NEW-INDEX)"
    )

    # -- what every engine declares (callers read these, never probe with getattr) ------------
    #: told what the engine waits for, once per cause (another writer's lock or lease, a
    #: catch-up of postings): ``on_wait(message)``
    on_wait: Callable[[str], None] | None = None
    #: whether the last :meth:`open` created the index
    created: bool = False
    #: what :meth:`open` did beyond opening (templates, pipeline, indices made), for ``init``
    actions: Sequence[str] = ()
    #: what stores the index, for people (``neardup init``): the kind of store, its version
    backend: str = "?"
    #: whether :meth:`search_collapsed` folds hits by cluster in the engine
    collapses_search: bool = False
    #: whether :meth:`search` takes a :class:`NativeQuery`; without it, words only
    native_queries: bool = False
    #: whether writes and candidate searches wait on a server (an HTTP engine): a run then
    #: signs the next batch meanwhile (:func:`neardup.indexing.workers.signed_ahead`)
    writes_wait_on_a_server: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        """Set only what the engine holds: the names its classes declare (annotations,
        attributes, properties). A setting held by one of its parts (``engine.remote.paging``,
        ``engine.connection.commit_every``) set on the engine would otherwise be silently
        unused; it is refused, naming the part that holds it.

        >>> from neardup.engines.embedded import EmbeddedEngine
        >>> EmbeddedEngine(":memory:").commit_every = 0.0
        Traceback (most recent call last):
        ...
        AttributeError: EmbeddedEngine holds no 'commit_every': it is engine.connection.commit_every
        """
        if name not in _declared(type(self)):
            # a part's own attributes (values such as strings have none)
            parts = [p for p, held in vars(self).items() if name in getattr(held, "__dict__", {})]
            where = (
                f": it is engine.{parts[0]}.{name}"
                if parts
                else " (what an engine holds is declared on its class)"
            )
            raise AttributeError(f"{type(self).__name__} holds no {name!r}{where}")
        super().__setattr__(name, value)

    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        """Open the index; create it with ``config`` (default settings) if absent.

        An existing index returns its own stored config; if ``config`` is given and
        differs, :class:`neardup.config.ConfigMismatch` is raised. An index signed with
        a signature version outside :data:`~neardup.config.OPENS_VERSIONS` is refused (its keys
        cannot be compared with this version's); one inside is signed for as its stored
        ``Config.version`` says. ``create=False`` refuses a missing index.

        The protocol is the same for every engine; engines implement its steps:
        :meth:`_read_config` (check the stored format, read the stored settings),
        :meth:`_create_index` (store a new index's settings), :meth:`_after_open`. When any
        step fails, :meth:`_abandon_open` releases what was opened.
        """
        try:
            stored = self._read_config()
            created = stored is None
            if stored is None:
                if not create:
                    raise EngineError(
                        f"{self.location}: no such neardup index ({self._create_hint})"
                    )
                # another process may create it meanwhile: the stored settings are what counts
                stored = self._create_index(config or Config())
            found = self._stored_version(stored)
            if found not in OPENS_VERSIONS:
                raise self._version_refused(found)
            if config is not None:
                config.check_same(stored, self.location)
            self._config = stored
            self.created = created
            self._after_open(created)
            return stored
        except BaseException:
            self._abandon_open()
            raise

    @abc.abstractmethod
    def _read_config(self) -> Config | None:
        """The stored settings of the index, None when there is no index yet. Refuses
        (:class:`EngineError`) storage that is not a neardup index of this engine's format;
        an existing index is only read here."""

    @abc.abstractmethod
    def _create_index(self, config: Config) -> Config:
        """Create the missing index with ``config``; return the settings stored (those of
        another process that created it first, if one did)."""

    def _after_open(self, created: bool) -> None:  # noqa: B027 -- an optional hook
        """Called once the stored settings are accepted and ``config`` returns them;
        ``created``: the index did not exist when it was read."""

    def _stored_version(self, stored: Config) -> int | None:
        """The signature version the index was signed with."""
        return stored.version

    def _version_refused(self, found: int | None) -> Exception:
        """The error for an index signed with another signature version (``found``)."""
        return EngineError(
            f"{self.location} was signed by another neardup (signature version {found}; this one "
            f"signs version {SIGNATURE_VERSION}, and its keys cannot be compared): "
            f"{self._rebuild_hint}"
        )

    def _abandon_open(self) -> None:
        """Release what a failed :meth:`open` opened."""
        self.close()

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
    def put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> list[Failure]:
        """Upsert signed documents (by id) with their tags; returns the refused ones.
        ``prepared``: what :meth:`batch_preparer` made of the batch they come from."""

    def start_put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> PendingPut:
        """:meth:`put`, answered later where the engine stores in the background: inside
        :meth:`writes_in_a_row`, an engine may send the documents and return at once, so the
        next batch is tagged while they are stored. Until the answer, they are candidates
        as if stored (a refused one stops being one when :meth:`PendingPut.failures`
        answers); a later write, a refresh or a read of the same ids waits for it. The
        default stores them now."""
        return PendingPut.settled(self.put(docs, tags, prepared=prepared), [s.id for s in docs])

    @abc.abstractmethod
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Run many candidate queries at once (one round trip where the engine allows)."""

    @abc.abstractmethod
    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True, shingles: bool = True
    ) -> dict[str, StoredDoc]:
        """Stored documents by id (missing ids are absent from the result); ``keys=False``
        leaves their ``keys`` empty (verification reads shingles only); ``shingles=False``
        leaves their ``shingles`` and ``keys`` empty (a read of a document's text, title or
        tags: shingles made again from the text cost far more than the read)."""

    def texts(self, ids: Iterable[str]) -> dict[str, str]:
        """The stored text of each document of ``ids`` that has one (missing ids are
        absent): what display titles need, without shingles or keys. Engines override this
        with a lighter read (shingles made again from the text cost more than the read);
        the default reads the documents with :meth:`get`."""
        return {
            i: d.text
            for i, d in self.get(ids, text=True, shingles=False).items()
            if d.text is not None
        }

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

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        """Every stored document's id, ``seq``, tags, title, language and time, in arrival
        order, without shingles or keys (what clusters and reports need). Engines override
        this with a lighter read; the default reads full documents."""
        for d in self.scan(batch_size=batch_size):
            yield TagRow(
                id=d.id,
                seq=d.seq,
                tags=d.tags,
                title=d.title,
                lang=d.lang,
                indexed_at=d.indexed_at,
            )

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        """Ids of the documents whose ``dup_of`` is one of ``representatives``, per
        representative, in arrival order. Engines override this with a term query; the
        default scans."""
        wanted = set(representatives)
        out: dict[str, list[str]] = {}
        for r in self.scan_tags():
            if r.tags is not None and r.tags.dup_of in wanted:
                out.setdefault(r.tags.dup_of, []).append(r.id)
        return out

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """An exclusive write session: while it is held, no other neardup process writes this
        index, and reads see every earlier write. Tagging a batch (read candidates, verify,
        store) runs inside one, so that concurrent writers never tag against each other's
        half-written state. Engines that need no lock may keep this default."""
        yield

    def batch_preparer(self) -> Callable[[Sequence[Signed]], PreparedBatch] | None:
        """A picklable function of a signed batch: what this engine stores of it that can be
        made in advance (a :class:`PreparedBatch`), run in the signing workers so that the
        process that tags and stores does less, and given back to :meth:`put` with the
        batch; None (the default) when the engine has nothing to make in advance."""
        return None

    @abc.abstractmethod
    def use_signer(self, signer: Signer) -> None:
        """The open index's signer (its owner's, :attr:`neardup.api.NearDup.signer`): stored
        shingles that are made again from the text (:mod:`~neardup.engines.stored_shingles`)
        are made by it, so a process canonicalizes with one signer."""

    @contextlib.contextmanager
    def writes_in_a_row(self) -> Iterator[None]:
        """Around many :meth:`writer` sessions of one run (an ``index`` command): an engine
        may commit them together now and then rather than each one. The default commits
        each one."""
        yield

    @abc.abstractmethod
    def count(self) -> int: ...

    def search_collapsed(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        """The best hit of each cluster among the hits of ``query`` (engines that declare
        :attr:`collapses_search`)."""
        raise NotImplementedError(f"{type(self).__name__} does not collapse search hits")

    def unsigned(self) -> int | None:
        """Documents of the index without neardup's fields (written by another client, or
        not signed yet in an attached index); None for an engine only neardup writes."""
        return None

    @property
    def adopted(self) -> bool:
        """Whether the index is the user's own, attached in place (its documents are the
        user's, neardup's fields added to them); False for an engine that holds neardup's
        documents only."""
        return False

    @abc.abstractmethod
    def search(self, query: SearchQuery, size: int = 10) -> list[Hit]:
        """Full-text search: words, or a :class:`NativeQuery` (engines that declare
        :attr:`native_queries`)."""

    @abc.abstractmethod
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        """Replace the stored clusters (what dashboards and reports read)."""

    @abc.abstractmethod
    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        """Stored clusters, largest first."""

    def refresh(self) -> None:  # noqa: B027 -- an optional hook: engines whose writes are visible at once keep it
        """Make writes visible to searches (no-op where writes are visible at once)."""

    def close(self) -> None:  # noqa: B027 -- an optional hook: engines holding nothing keep it
        """Release connections and files."""

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@functools.cache
def _declared(cls: type) -> frozenset[str]:
    """The names the classes of ``cls`` declare: annotated, or defined (methods, properties,
    defaults)."""
    return frozenset(name for c in cls.__mro__ for name in (*inspect.get_annotations(c), *vars(c)))
