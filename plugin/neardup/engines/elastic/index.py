"""The index the HTTP engine works on, as each of its parts holds it: the names of the
documents index and its side indices, the client that reaches them (made by
:func:`~neardup.engines.transport.connect`), the one call-with-retry, the engine's settings
(:mod:`.options`) and, once read, the index's stored settings and layout.

Every part of the engine (:mod:`.setup`, :mod:`.attach`, :mod:`.sessions`, :mod:`.writes`,
:mod:`.reads`) is made with the same :class:`Index`, so a client connected or a setting
changed is seen by all of them.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from typing import Any

from ...config import Config
from ..base import EngineError
from ..stored_shingles import ShingleCache, StoredShingles
from ..transport import Backoff, Retrying, Server, connect, split_credentials
from . import templates
from .layout import OWN
from .pager_and_bulk import BulkStreamer, Pager
from .options import DEFAULT_RETRY, IndexSetup, LeaseTimes, Paging
from .options import Connection as ConnectionSettings


#: Bytes of shingle hashes kept in memory (made again from texts, or stored by this process).
SHINGLE_CACHE_BYTES = 64 << 20


def set_key(exact: str | None, lang: str | None) -> tuple[str | None, str | None]:
    """What a shingle set is cached by: the exact digest of its tokens and the language
    they were shingled in determine it."""
    return (exact, lang)


def utc_now() -> str:
    """The current time as the engine stores it (ISO 8601, UTC, milliseconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Index:
    """The documents index ``name`` at ``url`` (``user:password@`` in it used as basic
    auth, never shown), its clusters and state indices, the client once :meth:`connect`
    made it, and what is known of the index once opened (:attr:`meta`, :attr:`layout`,
    :attr:`config`).

    >>> remote = Index("http://user:secret@localhost:9200/", "news")
    >>> remote.location, remote.clusters, remote.state
    ('http://localhost:9200/news', 'news-clusters', 'news-neardup-state')
    >>> remote.connection.basic_auth
    ('user', 'secret')
    """

    def __init__(
        self,
        url: str,
        name: str,
        *,
        connection: ConnectionSettings | None = None,
        retry: Backoff | None = None,
        paging: Paging | None = None,
        index_setup: IndexSetup | None = None,
        lease: LeaseTimes | None = None,
    ):
        connection = connection or ConnectionSettings()
        # user:password@ in the URL becomes basic auth: credentials never appear in a location
        # or message
        self.url, url_auth = split_credentials(url.rstrip("/"))
        if url_auth and not connection.basic_auth:
            connection = dataclasses.replace(connection, basic_auth=url_auth)
        self.connection = connection
        self.name = name
        self.clusters = templates.clusters_index(name)
        self.state = templates.state_index(name)
        self.location = f"{self.url}/{name}"
        self.paging = paging or Paging()
        self.index_setup = index_setup or IndexSetup()
        self.lease_times = lease or LeaseTimes()
        self.backoff = retry or dataclasses.replace(DEFAULT_RETRY)
        self.retry = Retrying(self.url, self.backoff, index=name)
        self.server: Server | None = None
        #: the client and its helpers module, once connected (None before and after)
        self.connected: Any = None
        self.helpers: Any = None
        #: the index's stored settings once read or made, None before
        self.opened: Config | None = None
        #: the settings document's data (``config``, ``fingerprint``, ``pipeline``...)
        self.meta: dict[str, Any] = {}
        #: where the document's own fields are (neardup's own index, or an adopted one's)
        self.layout = OWN
        #: what the last ``open`` or ``attach`` did, for ``neardup init``
        self.actions: list[str] = []
        self._shingles: StoredShingles | None = None  # (made at the first read: the config)

    @property
    def client(self) -> Any:
        if self.connected is None:
            raise EngineError("engine is not open")
        return self.connected

    @property
    def config(self) -> Config:
        if self.opened is None:
            raise EngineError("engine is not open")
        return self.opened

    @property
    def shingle_sets(self) -> StoredShingles:
        """Shingle sets made again from stored texts, and those this process stored."""
        if self._shingles is None:
            self._shingles = StoredShingles(self.config, ShingleCache(SHINGLE_CACHE_BYTES))
        return self._shingles

    @property
    def product(self) -> str:
        return self.server.product if self.server else "unknown"

    def connect(self) -> Server:
        """The server (the client made at the first call: the product is asked once)."""
        if self.connected is None:
            self.connected, self.server, self.helpers = connect(
                self.url,
                retry=self.retry,
                access=self.connection,
                request_timeout=self.connection.request_timeout,
            )
        assert self.server is not None
        return self.server

    def disconnect(self) -> None:
        """Close the client (best effort)."""
        if self.connected is not None:
            try:
                self.connected.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            self.connected = None

    def exists(self, index: str) -> bool:
        return bool(self.retry.call("index exists", self.client.indices.exists, index=index))

    def mappings(self) -> dict[str, Any]:
        """The mappings of the documents index (of its first concrete index)."""
        m = self.retry.call("get mapping", self.client.indices.get_mapping, index=self.name)
        return next(iter(m.values()), {}).get("mappings", {}) if m else {}

    def pager(self) -> Pager:
        return Pager(self.client, self.product, self.retry)

    def bulker(self) -> BulkStreamer:
        return BulkStreamer(self.client, self.helpers, self.retry, self.paging.chunk_size)
