"""The HTTP engine: Elasticsearch 8/9 or OpenSearch 2/3 through the official clients.

Canonicalization and signing run in Python (hazm cannot run inside the engine); the
engine stores the signed documents (field names in ``mappings/documents.json``) and finds
candidates by term match. Request bodies are built by the pure functions of :mod:`.dsl`;
the engine only sends them, retries, and parses answers (:mod:`.hits`).

:class:`ElasticEngine` is made of parts, each holding the :class:`~.index.Index` it works on
(the client, the names, the stored settings): :class:`~.setup.SetUp` (``open`` reads only;
creating an index, or ``setup``, installs templates, pipeline and the side indices),
:class:`~.attach.Attach` (``attach`` adopts a user's index in place),
:class:`~.sessions.Sessions` (the write lease, arrival numbers, refreshes),
:class:`~.writes.Writes` (``put``, tags, deletes, clusters), :class:`~.candidates.Candidates`
and :class:`~.reads.Reads`. This module builds them and answers the
:class:`~neardup.engines.base.Engine` interface through them.
"""

from __future__ import annotations

import contextlib

from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator, Sequence

from ...config import SIGNATURE_VERSION, Config, ConfigMismatch
from ...signing.records import Document, Signed
from ..base import (
    Candidate,
    CandidateQuery,
    ClusterRecord,
    Engine,
    EngineError,
    Failure,
    Hit,
    PendingPut,
    PreparedBatch,
    StoredDoc,
    Tags,
    TagRow,
)
from ..transport import Backoff, Retrying, Server
from . import templates
from .layout import Layout, ROOT
from .attach_checks import check_fields
from .attach import Attach
from .candidates import Candidates
from .index import Index, utc_now
from .options import Connection as ConnectionSettings
from .options import IndexSetup, LeaseTimes, Paging, grouped
from .reads import Reads
from .sessions import Sessions
from .setup import SetUp
from .writes import Writes

if TYPE_CHECKING:
    from ...signing.signer import Signer


class ElasticEngine(Engine):
    """Engine on an Elasticsearch or OpenSearch index (clusters in ``<index>-clusters``).

    Its settings come a concern at a time, each a record built by keyword
    (:mod:`~neardup.engines.elastic.options`): ``connection`` (credentials, TLS, the request
    timeout; ``user:password@`` in ``url`` is used as basic auth), ``retry`` (the one retry
    policy, :class:`~neardup.runtime.retry.Backoff`, for requests and bulk items), ``paging``
    (request sizes), ``index_setup`` (pipeline, templates, shards and replicas, health wait,
    refresh) and ``lease`` (the write lease's duration and wait). ``on_wait(message)`` is
    told once per writer it waits for. :meth:`from_options` takes the same settings flat.
    """

    collapses_search = True
    writes_wait_on_a_server = True
    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; its steps are SetUp's. Opening reads only, unless the index
    # is created or ``setup`` (``neardup init``) asks to install templates and pipeline
    # again: reading commands need read privileges only.
    _create_hint = "run 'neardup init' or 'neardup index' to create it"

    def __init__(
        self,
        url: str,
        index: str = "neardup",
        *,
        connection: ConnectionSettings | None = None,
        retry: Backoff | None = None,
        paging: Paging | None = None,
        index_setup: IndexSetup | None = None,
        lease: LeaseTimes | None = None,
        on_wait: Callable[[str], None] | None = None,
    ):
        problem = templates.index_name_problem(index)
        if problem:
            raise EngineError(
                f"invalid index name {index!r}: {problem}; "
                "use lowercase letters, digits, '-' and '_'"
            )
        self.ix = Index(
            url,
            index,
            connection=connection,
            retry=retry,
            paging=paging,
            index_setup=index_setup,
            lease=lease,
        )
        self.index = index
        self.url = self.ix.url
        self.location = self.ix.location
        self.clusters_index = self.ix.clusters
        self.state_index = self.ix.state
        self.setup = SetUp(self.ix, put_meta=self.put_meta)
        self.sessions = Sessions(self.ix, self.setup, on_wait=on_wait)
        self.adoption = Attach(self.ix, self.setup)
        self.writes = Writes(self.ix, self.setup, self.sessions)
        self.finder = Candidates(self.ix, self.sessions)
        self.reads = Reads(self.ix, self.sessions)

    @classmethod
    def from_options(cls, url: str, index: str = "neardup", **options: Any) -> ElasticEngine:
        """The engine of flat settings (``max_retries=2, page_size=100, ...``: the fields of
        the records, see :func:`~neardup.engines.elastic.options.grouped`), as a command line
        or ``NearDup.open(url, **options)`` gives them; ``on_wait`` as for the engine."""
        on_wait = options.pop("on_wait", None)
        return cls(url, index, on_wait=on_wait, **grouped(**options))

    # -- what the parts share, seen from outside ------------------------------------------------
    @property
    def client(self) -> Any:
        return self.ix.client

    @property
    def product(self) -> str:
        return self.ix.product

    @property  # type: ignore[override]
    def server(self) -> Server | None:
        return self.ix.server

    @property
    def connection(self) -> ConnectionSettings:
        return self.ix.connection

    @property
    def retry(self) -> Retrying:
        return self.ix.retry

    @property
    def backoff(self) -> Backoff:
        return self.ix.backoff

    @property
    def paging(self) -> Paging:
        return self.ix.paging

    @paging.setter
    def paging(self, value: Paging) -> None:
        self.ix.paging = value

    @property
    def index_setup(self) -> IndexSetup:
        return self.ix.index_setup

    @property
    def lease_times(self) -> LeaseTimes:
        return self.ix.lease_times

    @lease_times.setter
    def lease_times(self, value: LeaseTimes) -> None:
        self.ix.lease_times = value

    @property  # type: ignore[override]
    def layout(self) -> Layout:
        return self.ix.layout

    @layout.setter
    def layout(self, value: Layout) -> None:
        self.ix.layout = value

    @property  # type: ignore[override]
    def actions(self) -> list[str]:
        """What the last ``open`` or ``attach`` did, for ``neardup init``."""
        return self.ix.actions

    @property  # type: ignore[override]
    def on_wait(self) -> Callable[[str], None] | None:
        """Told a message once per writer whose lease this one waits for."""
        return self.sessions.on_wait

    @on_wait.setter
    def on_wait(self, value: Callable[[str], None] | None) -> None:
        self.sessions.on_wait = value

    @property  # type: ignore[override]
    def _config(self) -> Config | None:
        return self.ix.opened

    @_config.setter
    def _config(self, value: Config | None) -> None:
        self.ix.opened = value

    @property
    def order_field(self) -> str | None:  # type: ignore[override]
        return self.layout.order if self.layout.adopted else None

    # -- lifecycle ---------------------------------------------------------------------------
    def connect(self) -> Server:
        return self.ix.connect()

    def _read_config(self) -> Config | None:
        return self.setup.read_config()

    def _stored_version(self, stored: Config) -> int | None:
        return self.ix.meta.get("signature_version")

    def _version_refused(self, found: int | None) -> Exception:
        return ConfigMismatch(
            f"{self.location} was signed with signature version {found}, this neardup signs with "
            f"{SIGNATURE_VERSION}; re-sign by indexing the source documents again into a new index "
            f"(neardup index SOURCE -e {self.url}/NEW-INDEX)"
        )

    def _create_index(self, config: Config) -> Config:
        return self.setup.create_index(config)

    def _after_open(self, created: bool) -> None:
        self.setup.after_open(created)
        self.sessions.next_seq = self.sessions.max_seq() + 1

    def close(self) -> None:
        with contextlib.suppress(EngineError):  # (an error of the last write was told, or is)
            self.writes.close()
        lease = self.sessions.lease
        if lease is not None and lease.held:
            try:
                lease.release()
            except EngineError:  # it expires by itself
                pass
        self.ix.disconnect()

    # -- adopting an existing index ----------------------------------------------------------------
    def attach(self, layout: Layout, config: Config | None = None) -> Config:
        """Adopt the existing index in place (``neardup attach``): one mapping update adds the
        ``neardup`` object (and the ``_meta`` pointer, merged into the user's ``_meta``);
        the state index with the settings document and the clusters index are created.
        Nothing of the user's fields or mapping changes. An index adopted before is opened
        as it is (attaching again resumes), if its layout is the same; a field of ``layout``
        that is None (not given) is the stored one there."""
        try:
            return self._attach(Layout.from_dict({**layout.to_dict(), "adopted": True}), config)
        except BaseException:
            self.close()
            raise

    def _attach(self, layout: Layout, config: Config | None) -> Config:
        self.connect()
        self.ix.actions = []
        self.adoption.check_target()
        mappings = self.ix.mappings()
        user_meta = dict(mappings.get("_meta") or {})
        if ROOT in user_meta:  # adopted (or built) by neardup before: resume
            opened = self.open(config, create=False)
            self.adoption.resume(layout)
            return opened
        if layout.text is None:
            raise EngineError(
                f"{self.location} is not attached yet: name the field holding the text with "
                "--text-field"
            )
        check_fields(self.location, mappings, layout)
        config = config or Config()
        self.adoption.preflight(mappings, layout, config)
        self.adoption.adopt(layout, config, user_meta)
        self.sessions.next_seq = self.sessions.max_seq() + 1
        return config

    def unsigned_documents(
        self, batch_size: int = 500, on_textless: Callable[[str, str], None] | None = None
    ) -> Iterator[Document]:
        """The documents without neardup's fields, in the layout's arrival order
        (:meth:`~.attach.Attach.unsigned_documents`); each is signed by an update of the
        document the index holds when :meth:`put` stores it, never re-created."""
        for doc in self.adoption.unsigned_documents(batch_size, on_textless):
            self.writes.held.add(doc.id)
            yield doc

    def textless(self) -> int:
        return self.adoption.textless()

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any | None:
        if self.ix.opened is None:
            raise EngineError("engine is not open")
        return self.ix.meta.get(key)

    def put_meta(self, key: str, value: Any) -> None:
        """Store collection data in the settings document (not in the mapping ``_meta``)."""
        with self.sessions.writing():
            meta = dict(self.ix.meta)
            meta[key] = value
            src = templates.settings_source(meta, utc_now())
            self.retry.call(
                "write settings",
                self.client.index,
                index=self.state_index,
                id=templates.SETTINGS_ID,
                body=src,
                refresh="true",
            )
            self.ix.meta = meta

    # -- write sessions ------------------------------------------------------------------------
    def writer(self) -> ContextManager[None]:
        """An exclusive write session across processes (:meth:`~.sessions.Sessions.writer`)."""
        return self.sessions.writer()

    def writes_in_a_row(self) -> ContextManager[None]:
        """A run's sessions keep the lease (:meth:`~.sessions.Sessions.writes_in_a_row`)."""
        return self.sessions.writes_in_a_row()

    def use_signer(self, signer: Signer) -> None:
        self.ix.shingle_sets.use(signer)

    def refresh(self) -> None:
        self.sessions.refresh()

    # -- writes ------------------------------------------------------------------------------
    def put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> list[Failure]:
        return self.writes.put(docs, tags, prepared=prepared)

    def start_put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> PendingPut:
        return self.writes.start_put(docs, tags, prepared=prepared)

    def delete(self, ids: Iterable[str]) -> int:
        return self.writes.delete(ids)

    def update_tags(self, tags: dict[str, Tags]) -> None:
        self.writes.update_tags(tags)

    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        self.writes.write_clusters(clusters)

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        return self.finder.candidates(queries)

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        return self.finder.collisions(fields)

    # -- reads ---------------------------------------------------------------------------------
    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True, shingles: bool = True
    ) -> dict[str, StoredDoc]:
        return self.reads.get(ids, text=text, keys=keys, shingles=shingles)

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        return self.reads.scan(text=text, batch_size=batch_size)

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        return self.reads.scan_tags(batch_size=batch_size)

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        return self.reads.members(representatives)

    def count(self) -> int:
        return self.reads.count()

    def unsigned(self) -> int:
        return self.reads.unsigned()

    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        return self.reads.search(query, size)

    def search_collapsed(self, query: str | dict, size: int = 10) -> list[Hit]:
        return self.reads.search_collapsed(query, size)

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        return self.reads.read_clusters(limit)
