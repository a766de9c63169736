"""The HTTP engine: Elasticsearch 8/9 or OpenSearch 2/3 through the official clients.

Canonicalization and signing run in Python (hazm cannot run inside the engine); the
engine stores the signed documents (field names in ``mappings/documents.json``) and finds
candidates by term match. Request bodies are built by the pure functions of :mod:`.dsl`;
the engine only sends them, retries, and parses answers (:mod:`.hits`).

:class:`ElasticEngine` works on one :class:`~.index.Index` (the client, the names, the stored
settings). The protocol's reads, writes and candidate queries are its own methods, each
defined once in its module: it derives from :class:`~.reads.Reads`,
:class:`~.writes.Writes` (``put``, tags, deletes, clusters) and
:class:`~.candidates.Candidates`. What is not the protocol's are parts it holds, each
holding the same index: :class:`~.setup.SetUp` (``open`` reads only; creating an index, or
``setup``, installs templates, pipeline and the side indices), :class:`~.attach.Attach`
(``attach`` adopts a user's index in place) and :class:`~.sessions.Sessions` (the write
lease, arrival numbers, refreshes). This module answers the rest of the
:class:`~neardup.engines.base.Engine` interface: opening, attaching, meta, closing.
"""

from __future__ import annotations

import contextlib

from typing import Any, Callable, ContextManager, Iterator

from ...config import SIGNATURE_VERSION, Config, ConfigMismatch
from ...signing.records import Document
from ..base import (
    Engine,
    EngineError,
)
from ..transport import Backoff
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


class ElasticEngine(Reads, Writes, Candidates, Engine):
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
    native_queries = True
    writes_wait_on_a_server = True
    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; its steps are SetUp's. Opening reads only, unless the index
    # is created or ``setup`` (``neardup init``) asks to install templates and pipeline
    # again: reading commands need read privileges only.
    _create_hint = "run 'neardup init' or 'neardup index' to create it"
    # -- what it holds (set by __init__; no other name can be set, Engine.__setattr__) ----------
    remote: Index
    index: str
    url: str
    clusters_index: str
    state_index: str
    setup: SetUp
    sessions: Sessions
    attaching: Attach

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
        self.remote = Index(
            url,
            index,
            connection=connection,
            retry=retry,
            paging=paging,
            index_setup=index_setup,
            lease=lease,
        )
        self.index = index
        self.url = self.remote.url
        self.location = self.remote.location
        self.clusters_index = self.remote.clusters
        self.state_index = self.remote.state
        self.setup = SetUp(self.remote, put_meta=self.put_meta)
        self.sessions = Sessions(self.remote, self.setup, on_wait=on_wait)
        self.attaching = Attach(self.remote, self.setup)
        Reads.__init__(self)
        Writes.__init__(self)

    @classmethod
    def from_options(cls, url: str, index: str = "neardup", **options: Any) -> ElasticEngine:
        """The engine of flat settings (``max_retries=2, page_size=100, ...``: the fields of
        the records, see :func:`~neardup.engines.elastic.options.grouped`), as a command line
        or ``NearDup.open(url, **options)`` gives them; ``on_wait`` as for the engine."""
        on_wait = options.pop("on_wait", None)
        return cls(url, index, on_wait=on_wait, **grouped(**options))

    # -- what the parts share, seen from outside ------------------------------------------------
    @property
    def backend(self) -> str:
        server = self.remote.server
        return f"{server.product} {server.number}" if server else self.remote.url

    @property  # type: ignore[override]
    def actions(self) -> list[str]:
        """What the last ``open`` or ``attach`` did, for ``neardup init``."""
        return list(self.remote.actions)

    @property
    def adopted(self) -> bool:
        return bool(self.remote.layout.adopted)

    @property  # type: ignore[override]
    def on_wait(self) -> Callable[[str], None] | None:
        """Told a message once per writer whose lease this one waits for."""
        return self.sessions.on_wait

    @on_wait.setter
    def on_wait(self, value: Callable[[str], None] | None) -> None:
        self.sessions.on_wait = value

    @property  # type: ignore[override]
    def _config(self) -> Config | None:
        return self.remote.opened

    @_config.setter
    def _config(self, value: Config | None) -> None:
        self.remote.opened = value

    @property
    def order_field(self) -> str | None:  # type: ignore[override]
        return self.remote.layout.order if self.remote.layout.adopted else None

    # -- lifecycle ---------------------------------------------------------------------------
    def _read_config(self) -> Config | None:
        return self.setup.read_config()

    def _stored_version(self, stored: Config) -> int | None:
        return self.remote.meta.get("signature_version")

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
            self.stop_sending()
        lease = self.sessions.lease
        if lease is not None and lease.held:
            try:
                lease.release()
            except EngineError:  # it expires by itself
                pass
        self.remote.disconnect()

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
        self.remote.connect()
        self.remote.actions = []
        self.attaching.check_target()
        mappings = self.remote.mappings()
        user_meta = dict(mappings.get("_meta") or {})
        if ROOT in user_meta:  # adopted (or built) by neardup before: resume
            opened = self.open(config, create=False)
            self.attaching.resume(layout)
            return opened
        if layout.text is None:
            raise EngineError(
                f"{self.location} is not attached yet: name the field holding the text with "
                "--text-field"
            )
        check_fields(self.location, mappings, layout)
        config = config or Config()
        self.attaching.preflight(mappings, layout, config)
        self.attaching.adopt(layout, config, user_meta)
        self.sessions.next_seq = self.sessions.max_seq() + 1
        return config

    def unsigned_documents(
        self, batch_size: int = 500, on_textless: Callable[[str, str], None] | None = None
    ) -> Iterator[Document]:
        """The documents without neardup's fields, in the layout's arrival order
        (:meth:`~.attach.Attach.unsigned_documents`); each is signed by an update of the
        document the index holds when :meth:`put` stores it, never re-created."""
        for doc in self.attaching.unsigned_documents(batch_size, on_textless):
            self.held.add(doc.id)
            yield doc

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any | None:
        if self.remote.opened is None:
            raise EngineError("engine is not open")
        return self.remote.meta.get(key)

    def put_meta(self, key: str, value: Any) -> None:
        """Store collection data in the settings document (not in the mapping ``_meta``)."""
        with self.sessions.writing():
            meta = dict(self.remote.meta)
            meta[key] = value
            src = templates.settings_source(meta, utc_now())
            self.remote.retry.call(
                "write settings",
                self.remote.client.index,
                index=self.state_index,
                id=templates.SETTINGS_ID,
                body=src,
                refresh="true",
            )
            self.remote.meta = meta

    # -- write sessions ------------------------------------------------------------------------
    def writer(self) -> ContextManager[None]:
        """An exclusive write session across processes (:meth:`~.sessions.Sessions.writer`)."""
        return self.sessions.writer()

    def writes_in_a_row(self) -> ContextManager[None]:
        """A run's sessions keep the lease (:meth:`~.sessions.Sessions.writes_in_a_row`)."""
        return self.sessions.writes_in_a_row()

    def refresh(self) -> None:
        self.sessions.refresh()
