"""The HTTP engine: Elasticsearch 8/9 or OpenSearch 2/3 through the official clients.

Canonicalization and signing run in Python (hazm cannot run inside the engine); the
engine stores the signed documents (field names in ``mappings/documents.json``) and finds
candidates by term match. Request bodies are built by the pure functions of
:mod:`neardup.engines.dsl`; this module only sends them, retries, and parses answers.

* ``open`` (what ``neardup init`` runs) installs the index templates, the ingest pipeline
  (``ingest_pipeline/neardup.json``, the templates' ``default_pipeline``) and creates the
  documents and ``<index>-clusters`` indices idempotently; an existing index whose
  ``_meta.neardup`` holds other settings is refused with ConfigMismatch.
* ``put`` bulk-indexes with the client's ``streaming_bulk`` helper (``_id`` = document id,
  so retries are idempotent); 429 items are retried with backoff by the helper, whole
  batches on 502/503/504 and connection errors; refused documents come back as Failures.
* ``candidates`` sends one search per query through ``_msearch``; ``collisions`` pages
  (key, id) pairs with a ``composite`` aggregation; ``scan`` uses a point in time with
  ``search_after`` on ``seq`` (scroll where PIT is missing).

Writers in different processes take turns through a lease document in
``<index>-neardup-state`` (:mod:`neardup.engines.lease`): every write runs inside
:meth:`ElasticEngine.writer` (an explicit session, or one per write call), which reads the
index's largest ``seq`` after taking the lease, so arrival numbers never repeat across
processes, and refreshes before handing the lease on, so the next writer sees every write.
"""

from __future__ import annotations

import contextlib
import itertools
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..config import SIGNATURE_VERSION, Config, ConfigMismatch
from ..signer import Document, Signed
from . import dsl
from .base import Candidate, CandidateQuery, ClusterRecord, Engine, EngineError, Failure, Hit, StoredDoc, Tags, TagRow
from .lease import Holder, Lease
from .transport import Backoff, Retrying, Server, connect, describe, status_of


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ElasticEngine(Engine):
    """Engine on an Elasticsearch or OpenSearch index (clusters in ``<index>-clusters``).

    ``pipeline``: install the ingest pipeline and make it the index's ``default_pipeline``
    (True), do without (False, for engines without ingest such as test servers), or, by
    default, do as the existing index was built (a new index gets one); ``max_retries``/``initial_backoff``/``max_backoff`` set the retry policy;
    ``msearch_batch`` queries go in one ``_msearch``; ``max_clauses`` is the engine's
    boolean clause limit; ``page_size`` hits and ``agg_page_size`` (key, id) pairs per page.
    """

    def __init__(self, url: str, index: str = "neardup", api_key: Any = None, basic_auth: tuple[str, str] | None = None,
                 ca_certs: str | None = None, verify_certs: bool = True, request_timeout: float = 30.0, *,
                 pipeline: bool | None = None, max_retries: int = 5, initial_backoff: float = 0.5, max_backoff: float = 30.0,
                 chunk_size: int = 500, msearch_batch: int = 100, max_clauses: int = 1024, page_size: int = 1000, agg_page_size: int = 10000,
                 refresh_on_write: bool = True, health_timeout: str = "30s", lease_duration: float = 60.0,
                 lease_timeout: float | None = None, on_wait: Callable[[Holder, float], None] | None = None, setup: bool = False):
        if not index or index != index.lower() or index.startswith(("_", "-", "+")) or any(c in index for c in ' "*\\<|,>/?#:'):
            raise EngineError(f"invalid index name {index!r}: use lowercase letters, digits, '-' and '_'")
        self.url = url.rstrip("/")
        self.index = index
        self.clusters_index = dsl.clusters_index(index)
        self.state_index = dsl.state_index(index)
        #: where the document's own fields are (neardup's own index, or an adopted one's)
        self.layout = dsl.OWN
        self.location = f"{self.url}/{index}"
        self.use_pipeline = pipeline
        #: install templates/pipeline and check indices even when the index exists (neardup init)
        self.setup = setup
        self.chunk_size = chunk_size
        self.msearch_batch = msearch_batch
        self.max_clauses = max_clauses
        self.page_size = page_size
        self.agg_page_size = agg_page_size
        self.refresh_on_write = refresh_on_write
        self.health_timeout = health_timeout
        self.backoff = Backoff(max_retries, initial_backoff, max_backoff)
        self.retry = Retrying(self.url, self.backoff)
        self._conn = dict(api_key=api_key, basic_auth=basic_auth, ca_certs=ca_certs, verify_certs=verify_certs,
                          request_timeout=request_timeout)
        self._request_timeout = request_timeout
        self._client: Any = None
        self._helpers: Any = None
        self.server: Server | None = None
        self._config: Config | None = None
        self._meta: dict[str, Any] = {}
        self._next_seq = 1
        self.lease_duration = lease_duration
        self.lease_timeout = lease_timeout
        #: called with (holder, seconds waited) while another writer holds the write lease
        self.on_wait = on_wait
        self._lease: Lease | None = None
        self._session_depth = 0
        self._session_wrote = False
        #: what the last ``open`` did, for ``neardup init``
        self.actions: list[str] = []

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            raise EngineError("engine is not open")
        return self._client

    @property
    def product(self) -> str:
        return self.server.product if self.server else "unknown"

    def connect(self) -> Server:
        if self._client is None:
            self._client, self.server, self._helpers = connect(self.url, retry=self.retry, **self._conn)
        assert self.server is not None
        return self.server

    def open(self, config: Config | None = None, *, create: bool = True) -> Config:
        try:
            return self._open(config, create)
        except BaseException:
            self.close()
            raise

    def _open(self, config: Config | None, create: bool) -> Config:
        """Reads only, unless the index is created here or ``setup`` (``neardup init``) asks
        to install templates and pipeline again: reading commands need read privileges only."""
        server = self.connect()
        self.actions = []
        exists = self.retry("index exists", lambda: bool(self.client.indices.exists(index=self.index)))
        if exists:
            self._meta = self._read_settings()
            self.layout = dsl.Layout.from_dict(self._meta.get("layout"))
            stored = Config.from_dict(self._meta["config"])
            version = self._meta.get("signature_version")
            if version != SIGNATURE_VERSION:
                raise ConfigMismatch(f"{self.location} was signed with signature version {version}, this neardup signs with "
                                     f"{SIGNATURE_VERSION}; build a new index")
            if config is not None:
                config.check_same(stored, self.location)
            self._config = stored
            self.actions.append(f"index {self.index} exists (settings {self._meta.get('fingerprint')}) - kept")
            if self.setup:
                self._set_up(server, bool(self._meta.get("pipeline")) if self.use_pipeline is None else self.use_pipeline)
        else:
            if not create:
                raise EngineError(f"{self.location}: no such neardup index (run 'neardup init' or 'neardup index' to create it)")
            self._config = config or Config()
            use = self.use_pipeline is not False
            self._meta = dsl.index_meta(self._config, pipeline=dsl.pipeline_id(self.index) if use else None, layout=self.layout)
            self._set_up(server, use, new=True)
        self._next_seq = self._max_seq() + 1
        return self._config

    # -- adopting an existing index ----------------------------------------------------------------
    def attach(self, layout: dsl.Layout, config: Config | None = None) -> Config:
        """Adopt the existing index in place (``neardup attach``): one mapping update adds the
        ``neardup`` object (and the ``_meta`` pointer, merged into the user's ``_meta``);
        the state index with the settings document and the clusters index are created.
        Nothing of the user's fields or mapping changes. An index adopted before is opened
        as it is (attaching again resumes), if its layout is the same."""
        try:
            return self._attach(dsl.Layout.from_dict({**layout.to_dict(), "adopted": True}), config)
        except BaseException:
            self.close()
            raise

    def _attach(self, layout: dsl.Layout, config: Config | None) -> Config:
        self.connect()
        self.actions = []
        if not self.retry("index exists", lambda: bool(self.client.indices.exists(index=self.index))):
            raise EngineError(f"{self.location}: no such index to attach")
        m = _body(self.retry("get mapping", lambda: self.client.indices.get_mapping(index=self.index)))
        mappings = next(iter(m.values()), {}).get("mappings", {}) if m else {}
        user_meta = dict(mappings.get("_meta") or {})
        if dsl.ROOT in user_meta:  # adopted (or built) by neardup before: resume
            cfg = self._open(config, create=False)
            if self.layout != layout:
                raise EngineError(f"{self.location} is already attached with {self.layout.to_dict()}, not {layout.to_dict()}")
            self.actions.append(f"index {self.index} already attached - resuming")
            return cfg
        _check_fields(self.location, mappings, layout)
        self.layout = layout
        self._config = config or Config()
        self._meta = dsl.index_meta(self._config, layout=layout)
        self._ensure_state_index()
        self._create_settings()
        body = dsl.attach_mapping(self._config.signatures, dsl.meta_pointer(self.index, self._meta), user_meta)
        self.retry("put mapping", lambda: self.client.indices.put_mapping(index=self.index, body=body))
        self.actions.append(f"mapping of {self.index}: neardup.* added (user fields unchanged)")
        if not self.retry("index exists", lambda: bool(self.client.indices.exists(index=self.clusters_index))):
            cl = dsl.clusters_template(self.index)["template"]
            self.retry("create clusters index", lambda: self.client.indices.create(index=self.clusters_index, body=cl))
            self.actions.append(f"clusters index {self.clusters_index} created")
        self._next_seq = self._max_seq() + 1
        return self._config

    def unsigned_documents(self, batch_size: int = 500) -> Iterator[Document]:
        """The documents without neardup's fields that have a text, in the layout's arrival
        order (its order field, then index order), as Documents to sign and tag."""
        lay = self.layout
        for src_id, src in self._pages(lambda after, pit: dsl.unsigned_body(batch_size, after, pit, lay), batch_size, with_id=True):
            text = _text(src, lay.text)
            if not text:
                continue
            lang = _text(src, lay.lang) if lay.lang else None
            yield Document(src_id, text, title=_text(src, lay.title), lang=lang if lang in ("fa", "ru", "en") else None)

    def textless(self) -> int:
        """Documents without neardup's fields and without a text to sign (never signed)."""
        body = {"query": {"bool": {"must_not": [dsl.signed_query(), {"exists": {"field": self.layout.text}}]}}}
        return int(_body(self.retry("count", lambda: self.client.count(index=self.index, body=body)))["count"])

    def _set_up(self, server: Server, use_pipeline: bool, new: bool = False) -> None:
        """Pipeline, templates, state index with the settings document, both indices, health."""
        pipe = self._install(server, use_pipeline)
        self._ensure_state_index()
        if new:
            self._create_settings()
            self._create(self.index, "documents index")
        elif pipe and not self._meta.get("pipeline"):  # an index built without the pipeline gets it now
            self.retry("put settings", lambda: self.client.indices.put_settings(index=self.index, body=dsl.default_pipeline_settings(pipe)))
            self.put_meta("pipeline", pipe)
            self.actions.append(f"default_pipeline of {self.index} set to {pipe}")
        if not self.retry("index exists", lambda: bool(self.client.indices.exists(index=self.clusters_index))):
            self._create(self.clusters_index, "clusters index")
        else:
            self.actions.append(f"index {self.clusters_index} exists - kept")
        self._wait_healthy()

    def _create_settings(self) -> None:
        """The settings document of a new index; one made meanwhile by another process must agree."""
        src = dsl.settings_source(self._meta, _now())
        try:
            self.retry("create settings document", lambda: self.client.create(index=self.state_index, id=dsl.SETTINGS_ID, body=src,
                                                                              refresh="true"), ok_status=(409,))
            self.actions.append(f"settings document {self.state_index}/{dsl.SETTINGS_ID} created")
        except Exception as e:  # noqa: BLE001
            if status_of(e) != 409:
                raise
            theirs = self._read_settings_doc()
            assert self._config is not None
            self._config.check_same(Config.from_dict(theirs["config"]), self.location)
            self._meta = theirs

    def _install(self, server: Server, use_pipeline: bool) -> str | None:
        """Pipeline (optional) and both templates; PUT is idempotent."""
        pipe = None
        if use_pipeline:
            pipe = dsl.pipeline_id(self.index)
            body = dsl.pipeline_body(server.product, server.version)
            try:
                self.retry("put ingest pipeline", lambda: self.client.ingest.put_pipeline(id=pipe, body=body))
            except EngineError as e:
                raise EngineError(f"{e}; if this engine has no ingest pipelines, open the index without one "
                                  "(neardup init --no-pipeline, or pipeline=False)") from None
            fp = " with fingerprint" if dsl.supports_fingerprint(server.product, server.version) else ""
            self.actions.append(f"ingest pipeline {pipe} installed{fp}")
        docs_t = dsl.documents_template(self.index, dsl.meta_pointer(self.index, self._meta), pipe, self.config.signatures)
        name = dsl.documents_template_name(self.index)
        self.retry("put index template", lambda: self.client.indices.put_index_template(name=name, body=docs_t))
        self.actions.append(f"index template {name} -> {self.index}")
        cl_t = dsl.clusters_template(self.index)
        name2 = dsl.clusters_template_name(self.index)
        self.retry("put index template", lambda: self.client.indices.put_index_template(name=name2, body=cl_t))
        self.actions.append(f"index template {name2} -> {self.clusters_index}")
        return pipe

    def _create(self, index: str, what: str) -> None:
        try:
            self.retry(f"create {what}", lambda: self.client.indices.create(index=index), ok_status=(400,))
            self.actions.append(f"{what} {index} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" in describe(e):  # created meanwhile by another process
                self.actions.append(f"{what} {index} exists - kept")
                return
            raise EngineError(f"{self.url}: cannot create {what} {index}: {describe(e)}") from None

    def _ensure_state_index(self) -> None:
        """The state index (write lease, settings), created with its own mapping if absent."""
        if self.retry("index exists", lambda: bool(self.client.indices.exists(index=self.state_index))):
            return
        body = dsl.state_index_body()
        try:
            self.retry("create state index", lambda: self.client.indices.create(index=self.state_index, body=body), ok_status=(400,))
            self.actions.append(f"state index {self.state_index} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" not in describe(e):
                raise EngineError(f"{self.url}: cannot create state index {self.state_index}: {describe(e)}") from None

    def _wait_healthy(self) -> None:
        kw: dict[str, Any] = {"index": f"{self.index},{self.clusters_index}", "wait_for_status": "yellow", "timeout": self.health_timeout}
        if self.product == "opensearch":
            kw["request_timeout"] = self._request_timeout + 30
        health = self.retry("cluster health", lambda: _body(self.client.cluster.health(**kw)))
        if health.get("status") not in ("yellow", "green"):
            raise EngineError(f"{self.location}: cluster health is {health.get('status')} after {self.health_timeout}; "
                              "the index cannot be written (check shards and disk)")

    def _read_meta(self) -> dict[str, Any]:
        """``_meta.neardup`` of the documents index (a pointer; older indices: the settings)."""
        m = _body(self.retry("get mapping", lambda: self.client.indices.get_mapping(index=self.index)))
        mappings = next(iter(m.values()), {}).get("mappings", {}) if m else {}
        return dict((mappings.get("_meta") or {}).get("neardup") or {})

    def _read_settings(self) -> dict[str, Any]:
        """The index's settings: the settings document the ``_meta`` pointer names (indices of
        older versions kept them in ``_meta`` itself)."""
        pointer = self._read_meta()
        if "config" in pointer or (pointer.get("settings") and pointer.get("layout") != dsl.LAYOUT_VERSION):
            raise EngineError(f"{self.location} was built by an older neardup (its fields at the top level); build a new "
                              "index with this version, or adopt the documents in place with 'neardup attach'")
        if not pointer.get("settings"):
            raise EngineError(f"{self.location} exists but is not a neardup index (no _meta.neardup in its mapping); "
                              "to use an existing index, adopt it with 'neardup attach'")
        return self._read_settings_doc()

    def _read_settings_doc(self) -> dict[str, Any]:
        try:
            r = _body(self.retry("read settings", lambda: self.client.get(index=self.state_index, id=dsl.SETTINGS_ID), ok_status=(404,)))
        except Exception as e:  # noqa: BLE001
            if status_of(e) != 404:
                raise
            r = {}
        data = (r.get("_source") or {}).get("data") if r.get("found") else None
        if not data or "config" not in data:
            raise EngineError(f"{self.location}: its settings document {self.state_index}/{dsl.SETTINGS_ID} is missing; "
                              "run 'neardup init' on it again")
        return dict(data)

    def _max_seq(self) -> int:
        r = _body(self.retry("max seq", lambda: self.client.search(index=self.index, body=dsl.max_seq_body())))
        v = ((r.get("aggregations") or {}).get("max_seq") or {}).get("value")
        return int(v) if v is not None else 0

    def close(self) -> None:
        if self._lease is not None and self._lease.held:
            try:
                self._lease.release()
            except EngineError:  # it expires by itself
                pass
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            self._client = None

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> Any | None:
        if self._config is None:
            raise EngineError("engine is not open")
        return self._meta.get(key)

    def put_meta(self, key: str, value: Any) -> None:
        """Store collection data in the settings document (not in the mapping ``_meta``)."""
        with self._writing():
            meta = dict(self._meta)
            meta[key] = value
            src = dsl.settings_source(meta, _now())
            self.retry("write settings", lambda: self.client.index(index=self.state_index, id=dsl.SETTINGS_ID, body=src, refresh="true"))
            self._meta = meta

    # -- write sessions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """An exclusive write session across processes (the lease of ``<index>-neardup-state``).

        Waits while another writer holds the lease (``on_wait`` and the log say who); once
        held, reads the largest ``seq`` (numbers are assigned after it) and refreshes before
        releasing, so the next holder's candidate queries see every write of this one.
        Sessions nest; write calls outside a session open one of their own."""
        if self._session_depth:
            self._session_depth += 1
            try:
                yield
            finally:
                self._session_depth -= 1
            return
        lease = self._lease_of()
        lease.acquire()
        self._session_depth, self._session_wrote = 1, False
        try:
            self.refresh()  # the previous holder's last writes, whatever it did before releasing
            self._next_seq = max(self._next_seq, self._max_seq() + 1)
            yield
            if self._session_wrote:
                self.refresh()
        finally:
            self._session_depth = 0
            lease.release()

    def _lease_of(self) -> Lease:
        if self._lease is None:
            self._ensure_state_index()
            self._lease = Lease(self.client, self.state_index, self.retry, duration=self.lease_duration,
                                timeout=self.lease_timeout, on_wait=self._waiting, sleep=self.backoff.sleep)
        return self._lease

    def _waiting(self, holder: Holder, waited: float) -> None:
        if self.on_wait is not None:
            self.on_wait(holder, waited)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """The current session (renewed) or a session for this one call."""
        with self.writer():
            assert self._lease is not None
            self._lease.renew()
            self._session_wrote = True
            yield

    # -- writes ------------------------------------------------------------------------------
    def put(self, docs: Sequence[Signed], tags: dict[str, Tags] | None = None) -> list[Failure]:
        tags = tags or {}
        docs = list(docs)
        if not docs:
            return []
        with self._writing():
            seqs = self._assign_seq([s.id for s in docs])
            now = _now()
            actions = [dsl.index_action(self.index, s, tags.get(s.id), seqs[s.id], now, self.layout) for s in docs]
            failures = self._bulk(actions, "index documents")
            if self.refresh_on_write:
                self.refresh()
        return failures

    def _assign_seq(self, ids: list[str]) -> dict[str, int]:
        """Existing documents keep their arrival number; new ones get the next ones."""
        uniq = list(dict.fromkeys(ids))
        old: dict[str, int] = {}
        for chunk in _chunks(uniq, 1000):
            body = dsl.existing_seq_body(chunk)
            r = _body(self.retry("mget", lambda: self.client.mget(index=self.index, body=body)))
            for d in r.get("docs", []):
                seq = _nd(d.get("_source")).get("seq") if d.get("found") else None
                if seq is not None:
                    old[d["_id"]] = int(seq)
        out = {}
        for i in uniq:
            if i in old:
                out[i] = old[i]
            else:
                out[i] = self._next_seq
                self._next_seq += 1
        return out

    def _bulk(self, actions: list[dict[str, Any]], what: str, ignore_missing: bool = False, deleted: list[int] | None = None) -> list[Failure]:
        """Bulk actions in chunks; every refused action is returned, none dropped."""
        failures: list[Failure] = []
        for chunk in _chunks(actions, self.chunk_size):
            def run(chunk: list[dict[str, Any]] = chunk) -> list[tuple[bool, dict]]:
                return list(self._helpers.streaming_bulk(
                    self.client, chunk, chunk_size=len(chunk), raise_on_error=False, raise_on_exception=True,
                    max_retries=self.backoff.max_retries, initial_backoff=self.backoff.initial, max_backoff=self.backoff.maximum))

            results = self.retry(what, run)
            seen = 0
            for ok, item in results:
                seen += 1
                op, info = next(iter(item.items()))
                if ok:
                    if deleted is not None and info.get("result") == "deleted":
                        deleted[0] += 1
                    continue
                if ignore_missing and info.get("status") == 404:
                    continue
                failures.append(Failure(str(info.get("_id")), _item_reason(info)))
            if seen != len(chunk):  # the helper yields one result per action
                raise EngineError(f"{self.location}: {what}: {len(chunk)} actions sent, {seen} answered")
        return failures

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self._writing():
            actions = [dsl.delete_action(self.index, i) for i in ids]
            failures = self._bulk(actions, "delete documents", ignore_missing=True, deleted=(n := [0]))
            if failures:
                f = failures[0]
                raise EngineError(f"{self.location}: cannot delete {f.id}: {f.reason}")
            if self.refresh_on_write:
                self.refresh()
        return n[0]

    def update_tags(self, tags: dict[str, Tags]) -> None:
        if not tags:
            return
        with self._writing():
            actions = [dsl.update_tags_action(self.index, i, t) for i, t in tags.items()]
            failures = self._bulk(actions, "update tags", ignore_missing=True)
            if failures:
                shown = "; ".join(f"{f.id}: {f.reason}" for f in failures[:5])
                raise EngineError(f"{self.location}: {len(failures)} tag update(s) refused: {shown}")
            if self.refresh_on_write:
                self.refresh()

    def refresh(self) -> None:
        self.retry("refresh", lambda: self.client.indices.refresh(index=f"{self.index},{self.clusters_index}"))

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        out: list[list[Candidate]] = [[] for _ in queries]
        todo = [(i, dsl.candidate_body(q, self.max_clauses)) for i, q in enumerate(queries)]
        todo = [(i, b) for i, b in todo if b is not None]
        for batch in _chunks(todo, self.msearch_batch):
            for (i, _), resp in zip(batch, self._msearch([b for _, b in batch])):
                out[i] = [_candidate(h) for h in resp["hits"]["hits"]]
        return out

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Responses in order; items refused with 429 are sent again with backoff."""
        results: list[dict[str, Any] | None] = [None] * len(bodies)
        pending = list(range(len(bodies)))
        attempt = 0
        while pending:
            lines = dsl.msearch_lines(self.index, [bodies[i] for i in pending])
            r = _body(self.retry("msearch", lambda: self.client.msearch(body=lines)))
            again = []
            for i, resp in zip(pending, r["responses"]):
                if "error" in resp:
                    if resp.get("status") in (429, 503) and attempt < self.backoff.max_retries:
                        again.append(i)
                        continue
                    raise EngineError(f"{self.location}: candidate search failed: {_error_reason(resp)}")
                results[i] = resp
            if again:
                self.backoff.sleep(self.backoff.delay(attempt))
                attempt += 1
            pending = again
        return results  # type: ignore[return-value]

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        for f in fields:
            if f not in self.config.signatures:
                continue
            after = None
            key, group = None, []
            while True:
                body = dsl.collisions_body(f, self.agg_page_size, after)
                r = _body(self.retry("collisions", lambda: self.client.search(index=self.index, body=body)))
                agg = (r.get("aggregations") or {}).get("pairs") or {}
                buckets = agg.get("buckets") or []
                for b in buckets:
                    k, doc = b["key"]["key"], b["key"]["id"]
                    if k != key:
                        if len(group) > 1:
                            yield group
                        key, group = k, []
                    group.append(doc)
                after = agg.get("after_key")
                if not buckets or not after:
                    break
            if len(group) > 1:
                yield group

    # -- reads ---------------------------------------------------------------------------------
    def get(self, ids: Iterable[str], *, text: bool = False) -> dict[str, StoredDoc]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredDoc] = {}
        for chunk in _chunks(ids, 500):
            body = dsl.mget_body(chunk, text, self.layout)
            r = _body(self.retry("mget", lambda: self.client.mget(index=self.index, body=body)))
            for d in r.get("docs", []):
                if d.get("found") and _signed(d.get("_source")):
                    sd = self._stored(d["_source"], text)
                    out[sd.id] = sd
        return out

    def _stored(self, src: dict[str, Any], text: bool) -> StoredDoc:
        nd, lay = src[dsl.ROOT], self.layout
        keys = nd.get("keys") or {}
        return StoredDoc(id=nd["id"], lang=nd.get("lang"), n_shingles=int(nd.get("n_shingles") or 0),
                         shingles=dsl.decode_shingles(nd.get("shingles")), simhash=int(nd.get("simhash") or "0", 16),
                         exact=nd.get("exact"), keys={f: dsl.parse_keys(f, keys.get(f, [])) for f in self.config.signatures},
                         tags=_tags(nd), title=_text(src, lay.title), text=_text(src, lay.text) if text else None,
                         fields=dict(src.get("fields") or {}) if not lay.adopted else {}, indexed_at=nd.get("indexed_at"),
                         seq=int(nd.get("seq") or 0))

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        for src in self._pages(lambda after, pit: dsl.scan_body(batch_size, after, pit, text, self.layout), batch_size):
            yield self._stored(src, text)

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        for src in self._pages(lambda after, pit: dsl.tag_scan_body(batch_size, after, pit, self.layout), batch_size):
            yield _tag_row(src, self.layout)

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        reps = list(dict.fromkeys(representatives))
        out: dict[str, list[str]] = {}
        for chunk in _chunks(reps, 1000):
            after = None
            while True:
                body = dsl.members_body(chunk, self.page_size, after)
                hits = _body(self.retry("members", lambda: self.client.search(index=self.index, body=body)))["hits"]["hits"]
                for h in hits:
                    nd = _nd(h["_source"])
                    out.setdefault(nd["dup_of"], []).append(nd.get("id") or h["_id"])
                if len(hits) < self.page_size:
                    break
                after = hits[-1]["sort"]
        return out

    def _pages(self, body_of: Callable[[Any, dict[str, Any] | None], dict[str, Any]], size: int,
               with_id: bool = False) -> Iterator[Any]:
        """Every ``_source`` (``with_id``: ``(_id, _source)``) of a sorted search: pages over a
        point in time with ``search_after`` (a scroll on engines without point in time)."""
        pit = self._open_pit()
        if pit is None:
            yield from self._scroll(body_of(None, None), with_id)
            return
        try:
            after = None
            while True:
                body = body_of(after, {"id": pit, "keep_alive": "5m"})
                r = _body(self.retry("scan", lambda: self.client.search(body=body)))
                pit = r.get("pit_id", pit)
                hits = r["hits"]["hits"]
                for h in hits:
                    yield (h["_id"], h["_source"]) if with_id else h["_source"]
                if len(hits) < size:
                    return
                after = hits[-1]["sort"]
        finally:
            self._close_pit(pit)

    def _open_pit(self) -> str | None:
        try:
            if self.product == "opensearch":
                r = _body(self.retry("open point in time", lambda: self.client.create_pit(index=self.index, keep_alive="5m"),
                                     ok_status=(400, 404, 405)))
                return r.get("pit_id")
            r = _body(self.retry("open point in time", lambda: self.client.open_point_in_time(index=self.index, keep_alive="5m"),
                                 ok_status=(400, 404, 405)))
            return r.get("id")
        except Exception as e:  # noqa: BLE001
            if status_of(e) in (400, 404, 405):  # no PIT on this engine: scroll instead
                return None
            raise

    def _close_pit(self, pit: str) -> None:
        try:
            if self.product == "opensearch":
                self.client.delete_pit(body={"pit_id": [pit]})
            else:
                self.client.close_point_in_time(body={"id": pit})
        except Exception:  # noqa: BLE001 - it expires by itself
            pass

    def _scroll(self, body: dict[str, Any], with_id: bool = False) -> Iterator[Any]:
        body.pop("track_total_hits", None)  # not allowed with scroll
        r = _body(self.retry("scan", lambda: self.client.search(index=self.index, body=body, scroll="5m")))
        sid = r.get("_scroll_id")
        try:
            while True:
                hits = r["hits"]["hits"]
                for h in hits:
                    yield (h["_id"], h["_source"]) if with_id else h["_source"]
                if not hits or not sid:
                    return
                r = _body(self.retry("scroll", lambda: self.client.scroll(body={"scroll_id": sid, "scroll": "5m"})))
                sid = r.get("_scroll_id", sid)
        finally:
            if sid:
                try:
                    self.client.clear_scroll(body={"scroll_id": [sid]})
                except Exception:  # noqa: BLE001
                    pass

    def count(self) -> int:
        """Documents neardup has signed."""
        return int(_body(self.retry("count", lambda: self.client.count(index=self.index, body=dsl.count_body())))["count"])

    def unsigned(self) -> int:
        """Documents of the index without neardup's fields (written by other clients): every
        read skips them; ``neardup attach`` signs them."""
        return int(_body(self.retry("count", lambda: self.client.count(index=self.index, body=dsl.count_body(False))))["count"])

    # -- full-text search -------------------------------------------------------------------------
    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        body = dsl.fulltext_body(query, size, self.layout)
        r = _body(self.retry("search", lambda: self.client.search(index=self.index, body=body)))
        return [_hit(h, self.layout) for h in r["hits"]["hits"]]

    def search_collapsed(self, query: str | dict, size: int = 10) -> list[Hit]:
        """Search with near-copies folded: tagged hits collapse on ``cluster_id`` (their
        copies in ``folded``), untagged hits stay as they are; merged by score."""
        tagged, untagged = dsl.collapsed_bodies(query, size, layout=self.layout)
        a, b = self._msearch_index([tagged, untagged])
        hits = []
        for h in a["hits"]["hits"]:
            hit = _hit(h, self.layout)
            inner = ((h.get("inner_hits") or {}).get("copies") or {}).get("hits", {}).get("hits", [])
            hit.folded = [x["_id"] for x in inner if x["_id"] != hit.id]
            hits.append(hit)
        hits.extend(_hit(h, self.layout) for h in b["hits"]["hits"])
        hits.sort(key=lambda h: -h.score)  # stable: ties keep engine order
        return hits[:size]

    def _msearch_index(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines = dsl.msearch_lines(self.index, bodies)
        r = _body(self.retry("search", lambda: self.client.msearch(body=lines)))
        for resp in r["responses"]:
            if "error" in resp:
                raise EngineError(f"{self.location}: search failed: {_error_reason(resp)}")
        return r["responses"]

    # -- clusters --------------------------------------------------------------------------------
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        with self._writing():
            now = _now()
            new_ids = {c.cluster_id for c in clusters}
            stale = [i for i in self._cluster_ids() if i not in new_ids]
            actions = [dsl.cluster_action(self.index, c, now) for c in clusters]
            actions += [{"_op_type": "delete", "_index": self.clusters_index, "_id": i} for i in stale]
            failures = self._bulk(actions, "write clusters", ignore_missing=True)
            if failures:
                shown = "; ".join(f"{f.id}: {f.reason}" for f in failures[:5])
                raise EngineError(f"{self.url}/{self.clusters_index}: {len(failures)} cluster(s) refused: {shown}")
            self.refresh()

    def _cluster_ids(self) -> Iterator[str]:
        after = None
        while True:
            body = dsl.cluster_ids_body(self.page_size, after)
            r = _body(self.retry("read clusters", lambda: self.client.search(index=self.clusters_index, body=body)))
            hits = r["hits"]["hits"]
            for h in hits:
                yield h["_id"]
            if len(hits) < self.page_size:
                return
            after = hits[-1]["sort"]

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        out: list[ClusterRecord] = []
        after = None
        while limit is None or len(out) < limit:
            size = self.page_size if limit is None else min(self.page_size, limit - len(out))
            body = dsl.read_clusters_body(size, after)
            r = _body(self.retry("read clusters", lambda: self.client.search(index=self.clusters_index, body=body)))
            hits = r["hits"]["hits"]
            for h in hits:
                s = h["_source"]
                out.append(ClusterRecord(s["cluster_id"], int(s["size"]), s["representative_id"], s.get("representative_title"),
                                         list(s.get("members") or []), s.get("min_resemblance"), s.get("mean_resemblance"),
                                         s.get("max_resemblance"), list(s.get("languages") or []), s.get("first_seen"),
                                         s.get("last_seen")))
            if len(hits) < size:
                break
            after = hits[-1]["sort"]
        return out


# -- parsing helpers ------------------------------------------------------------------------------
def _body(resp: Any) -> dict[str, Any]:
    """The JSON body of either client's response."""
    return getattr(resp, "body", resp)


def _chunks(seq: Sequence[Any], n: int) -> Iterator[list[Any]]:
    it = iter(seq)
    while chunk := list(itertools.islice(it, max(1, n))):
        yield chunk


def _field_mapping(mappings: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The mapping of a (dotted) field, multi-fields included; None if unmapped."""
    props, spec = mappings.get("properties") or {}, None
    parts = path.split(".")
    for i, part in enumerate(parts):
        spec = props.get(part)
        if spec is None:
            parent = _field_mapping(mappings, ".".join(parts[:i])) if i else None
            return (parent or {}).get("fields", {}).get(".".join(parts[i:])) if parent else None
        props = spec.get("properties") or {}
    return spec


def _check_fields(location: str, mappings: dict[str, Any], layout: dsl.Layout) -> None:
    """The fields named for attach exist with usable types; ``neardup`` is free."""
    if dsl.ROOT in (mappings.get("properties") or {}):
        raise EngineError(f"{location}: the index already has a field named '{dsl.ROOT}'; neardup keeps its fields under it")
    wanted = {"--text-field": (layout.text, {"text", "keyword", "match_only_text"}),
              "--title-field": (layout.title, {"text", "keyword", "match_only_text"}),
              "--lang-field": (layout.lang, {"keyword", "text"}),
              "--order-field": (layout.order, {"date", "date_nanos", "long", "integer", "short", "byte", "double", "float",
                                               "half_float", "scaled_float", "unsigned_long", "keyword"})}
    for option, (path, types) in wanted.items():
        if not path:
            continue
        spec = _field_mapping(mappings, path)
        if spec is None:
            raise EngineError(f"{location}: {option} {path}: no such field in the index mapping")
        if spec.get("type", "object") not in types:
            raise EngineError(f"{location}: {option} {path} is of type {spec.get('type', 'object')}; expected one of {', '.join(sorted(types))}")


def _nd(src: dict[str, Any] | None) -> dict[str, Any]:
    """The ``neardup`` object of a ``_source`` ({} for documents without one)."""
    v = (src or {}).get(dsl.ROOT)
    return v if isinstance(v, dict) else {}


def _text(src: dict[str, Any], path: str | None) -> Any:
    """A (possibly dotted) field of a ``_source``; the first value of an array."""
    if not path:
        return None
    v: Any = src
    for part in path.split("."):
        if not isinstance(v, dict):
            return None
        v = v.get(part)
    if isinstance(v, list):
        v = next((x for x in v if isinstance(x, str)), None)
    return v if v is None or isinstance(v, str) else str(v)


def _candidate(h: dict[str, Any]) -> Candidate:
    nd = _nd(h.get("_source"))
    return Candidate(h["_id"], int(nd.get("n_shingles") or 0), int(nd.get("simhash") or "0", 16), float(h.get("_score") or 0.0),
                     dsl.decode_shingles(nd.get("shingles")) if "shingles" in nd else None, nd.get("cluster_id"),
                     frozenset(h.get("matched_queries") or ()) or None, int(nd.get("seq") or 0))


def _signed(src: dict[str, Any] | None) -> bool:
    """Whether a stored document carries neardup's fields."""
    nd = _nd(src)
    return nd.get("seq") is not None and nd.get("id") is not None and nd.get("shingles") is not None


def _tags(nd: dict[str, Any]) -> Tags | None:
    cid = nd.get("cluster_id")
    if cid is None:
        return None
    return Tags(cid, nd.get("dup_of"), float(nd.get("max_resemblance") or 0.0), bool(nd.get("is_duplicate")))


def _tag_row(src: dict[str, Any], layout: dsl.Layout) -> TagRow:
    nd = src[dsl.ROOT]
    return TagRow(nd["id"], int(nd.get("seq") or 0), _tags(nd), _text(src, layout.title), nd.get("lang"), nd.get("indexed_at"))


def _hit(h: dict[str, Any], layout: dsl.Layout) -> Hit:
    s = h.get("_source") or {}
    hl = (h.get("highlight") or {}).get(layout.text) or [""]
    return Hit(h["_id"], float(h.get("_score") or 0.0), _text(s, layout.title), hl[0], _nd(s).get("cluster_id"))


def _item_reason(info: dict[str, Any]) -> str:
    err = info.get("error")
    if isinstance(err, dict):
        reason = f"{err.get('type')}: {err.get('reason')}"
        cause = err.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            reason += f" ({cause.get('reason')})"
        return f"{info.get('status')} {reason}"
    return f"{info.get('status')} {err or info.get('exception') or 'refused'}"


def _error_reason(resp: dict[str, Any]) -> str:
    err = resp.get("error")
    if isinstance(err, dict):
        root = (err.get("root_cause") or [{}])[0]
        return f"{resp.get('status')} {err.get('type')}: {root.get('reason') or err.get('reason')}"
    return f"{resp.get('status')} {err}"
