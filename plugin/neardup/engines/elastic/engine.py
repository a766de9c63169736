"""The HTTP engine: Elasticsearch 8/9 or OpenSearch 2/3 through the official clients.

Canonicalization and signing run in Python (hazm cannot run inside the engine); the
engine stores the signed documents (field names in ``mappings/documents.json``) and finds
candidates by term match. Request bodies are built by the pure functions of
:mod:`neardup.engines.elastic.dsl`; this module only sends them, retries, and parses answers.

* ``open`` reads only (reading commands need read privileges only). Creating an index,
  or ``setup`` (what ``neardup init`` runs), installs the index templates, the ingest
  pipeline (``ingest_pipeline/neardup.json``, the templates' ``default_pipeline``), the
  state index with the settings document, and creates the documents and
  ``<index>-clusters`` indices idempotently; an existing index with other settings is
  refused with ConfigMismatch. ``attach`` adopts a user's index in place.
* ``put`` checks each document (id length, valid Unicode) and stores the rest through
  :class:`~neardup.engines.elastic.calls.BulkStreamer` (``_id`` = document id, so retries are
  idempotent); refused documents come back as Failures, none dropped.
* ``candidates`` sends one search per query through ``_msearch``; ``collisions`` pages
  (key, id) pairs with a ``composite`` aggregation; ``scan`` reads over a point in time
  with ``search_after`` on ``neardup.seq`` (scroll where PIT is missing), all through
  :class:`~neardup.engines.elastic.calls.Pager`; every request goes through one call-with-retry.

Writers in different processes take turns through a lease document in
``<index>-neardup-state`` (:mod:`neardup.engines.elastic.lease`): every write runs inside
:meth:`ElasticEngine.writer` (an explicit session, or one per write call), which reads the
index's largest ``seq`` after taking the lease, so arrival numbers never repeat across
processes, and refreshes before handing the lease on, so the next writer sees every write.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import itertools
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Sequence

from ...config import SIGNATURE_VERSION, Config, ConfigMismatch, is_language_code
from ...signing.encoding import parse_keys
from ...signing.records import Document, Signed
from . import dsl
from ..base import (
    Candidate,
    CandidateQuery,
    ClusterRecord,
    Engine,
    EngineError,
    Failure,
    Hit,
    PreparedBatch,
    StoredDoc,
    Tags,
    TagRow,
)
from .calls import BulkStreamer, Pager, chunks, document_problem
from .answers import (
    candidate_of,
    check_fields,
    cluster_record,
    count_fields,
    entry_of,
    flat_settings,
    error_reason,
    field_mapping,
    field_text,
    hit_of,
    is_signed,
    json_kind,
    missing_shards,
    neardup_part,
    order_date,
    settings_problem,
    source_field,
    source_problem,
    source_text,
    stored_text,
    stored_shingles,
    tag_row,
    tags_of,
    target_problem,
)
from .options import DEFAULT_RETRY, IndexSetup, LeaseTimes, Paging, grouped
from .options import Connection as ConnectionSettings
from ..embedded.shingle_column import ShingleCache, ShingleColumn, column
from .key_match import Entry, KeyMatcher, merged
from .lease import Holder, Lease
from ..transport import Backoff, Retrying, Server, connect, describe, split_credentials, status_of


def _checked(docs: Sequence[Signed]) -> tuple[list[Signed], list[Failure]]:
    """The documents to send, and a Failure for each that would make the engine refuse a
    whole request (:func:`~neardup.engines.elastic.calls.document_problem`): refused here, alone."""
    good, failures = [], []
    for s in docs:
        d = s.doc
        problem = document_problem(
            s.id, (d.text, d.title, d.fields or None) if d is not None else ()
        )
        if problem:
            failures.append(Failure(s.id, problem))
        else:
            good.append(s)
    return good, failures


def _set_key(exact: str | None, lang: str | None) -> tuple[str | None, str | None]:
    """What a shingle set is cached by: the exact digest of its tokens and the language
    they were shingled in determine it."""
    return (exact, lang)


#: Bytes of shingle hashes kept in memory (made again from texts, or stored by this process).
SHINGLE_CACHE_BYTES = 64 << 20


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclasses.dataclass
class _Hold:
    """One turn of a run's writer with the lease (:meth:`ElasticEngine.writes_in_a_row`):
    documents stored from ``start_seq`` on are held in ``recent`` and matched here; the
    engine answers for those stored before. ``stale``: a document stored before was
    changed (replaced, re-tagged, deleted) and the engine must refresh before it answers."""

    start_seq: int
    recent: KeyMatcher = dataclasses.field(default_factory=KeyMatcher)
    stale: bool = False
    started: float = dataclasses.field(default_factory=time.monotonic)

    def expired(self, hold: float) -> bool:
        return time.monotonic() - self.started >= hold


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
        problem = dsl.index_name_problem(index)
        if problem:
            raise EngineError(
                f"invalid index name {index!r}: {problem}; "
                "use lowercase letters, digits, '-' and '_'"
            )
        connection = connection or ConnectionSettings()
        # user:password@ in the URL becomes basic auth: credentials never appear in a location
        # or message
        self.url, url_auth = split_credentials(url.rstrip("/"))
        if url_auth and not connection.basic_auth:
            connection = dataclasses.replace(connection, basic_auth=url_auth)
        self.connection = connection
        self.index = index
        self.clusters_index = dsl.clusters_index(index)
        self.state_index = dsl.state_index(index)
        #: where the document's own fields are (neardup's own index, or an adopted one's)
        self.layout = dsl.OWN
        self.location = f"{self.url}/{index}"
        self.paging = paging or Paging()
        self.index_setup = index_setup or IndexSetup()
        self.lease_times = lease or LeaseTimes()
        self.backoff = retry or dataclasses.replace(DEFAULT_RETRY)
        self.retry = Retrying(self.url, self.backoff)
        self._client: Any = None
        self._helpers: Any = None
        self.server: Server | None = None
        self._config: Config | None = None
        self._meta: dict[str, Any] = {}
        self._next_seq = 1
        #: told a message once per writer whose lease this one waits for
        self.on_wait = on_wait
        self._order_type_cache: tuple[str | None] | None = None  # (read once: _order_type)
        self._waited_for: set[str] = set()  # owners of leases on_wait was told of
        self._lease: Lease | None = None
        self._session_depth = 0
        self._dirty = False  # writes not yet made visible by a refresh
        #: ids :meth:`unsigned_documents` read from the adopted index and :meth:`put` has not
        #: written yet: signed by an update of the document the index holds, never re-created
        self._held: set[str] = set()
        self._in_run = False  # inside writes_in_a_row
        #: the lease kept over a run's sessions, and the documents stored meanwhile
        self._hold: _Hold | None = None
        self._shingles: ShingleColumn | None = None  # (made at the first read: the config)
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

    @classmethod
    def from_options(cls, url: str, index: str = "neardup", **options: Any) -> ElasticEngine:
        """The engine of flat settings (``max_retries=2, page_size=100, ...``: the fields of
        the records, see :func:`~neardup.engines.elastic.options.grouped`), as a command line
        or ``NearDup.open(url, **options)`` gives them; ``on_wait`` as for the engine."""
        on_wait = options.pop("on_wait", None)
        return cls(url, index, on_wait=on_wait, **grouped(**options))

    def connect(self) -> Server:
        if self._client is None:
            c = self.connection
            self._client, self.server, self._helpers = connect(
                self.url,
                retry=self.retry,
                api_key=c.api_key,
                basic_auth=c.basic_auth,
                ca_certs=c.ca_certs,
                verify_certs=c.verify_certs,
                request_timeout=c.request_timeout,
            )
        assert self.server is not None
        return self.server

    # The protocol (read, create when absent, refuse another signature version, compare
    # settings) is Engine.open; these are its steps here. Opening reads only, unless the
    # index is created or ``setup`` (``neardup init``) asks to install templates and pipeline
    # again: reading commands need read privileges only.
    _create_hint = "run 'neardup init' or 'neardup index' to create it"

    def _read_config(self) -> Config | None:
        self.connect()
        self.actions = []
        if not bool(self.retry.call("index exists", self.client.indices.exists, index=self.index)):
            return None
        self._meta = self._read_settings()
        self.layout = dsl.Layout.from_dict(self._meta.get("layout"))
        return Config.from_dict(self._meta["config"])

    def _stored_version(self, stored: Config) -> int | None:
        return self._meta.get("signature_version")

    def _version_refused(self, found: int | None) -> Exception:
        return ConfigMismatch(
            f"{self.location} was signed with signature version {found}, this neardup signs with "
            f"{SIGNATURE_VERSION}; re-sign by indexing the source documents again into a new index "
            f"(neardup index SOURCE -e {self.url}/NEW-INDEX)"
        )

    def _create_index(self, config: Config) -> Config:
        self._config = config
        use = self.index_setup.pipeline is not False
        self._meta = dsl.index_meta(
            config, pipeline=dsl.pipeline_id(self.index) if use else None, layout=self.layout
        )
        self._set_up(self.connect(), use, new=True)  # a settings document made meanwhile must agree
        return config

    def _after_open(self, created: bool) -> None:
        if not created:
            self.actions.append(
                f"index {self.index} exists (settings {self._meta.get('fingerprint')}) - kept"
            )
            if self.index_setup.setup:
                self._set_up(
                    self.connect(),
                    bool(self._meta.get("pipeline"))
                    if self.index_setup.pipeline is None
                    else self.index_setup.pipeline,
                )
        self._next_seq = self._max_seq() + 1

    # -- adopting an existing index ----------------------------------------------------------------
    def attach(self, layout: dsl.Layout, config: Config | None = None) -> Config:
        """Adopt the existing index in place (``neardup attach``): one mapping update adds the
        ``neardup`` object (and the ``_meta`` pointer, merged into the user's ``_meta``);
        the state index with the settings document and the clusters index are created.
        Nothing of the user's fields or mapping changes. An index adopted before is opened
        as it is (attaching again resumes), if its layout is the same; a field of ``layout``
        that is None (not given) is the stored one there."""
        try:
            return self._attach(dsl.Layout.from_dict({**layout.to_dict(), "adopted": True}), config)
        except BaseException:
            self.close()
            raise

    def _attach(self, layout: dsl.Layout, config: Config | None) -> Config:
        self.connect()
        self.actions = []
        self._check_target()
        m = self.retry.call("get mapping", self.client.indices.get_mapping, index=self.index)
        mappings = next(iter(m.values()), {}).get("mappings", {}) if m else {}
        user_meta = dict(mappings.get("_meta") or {})
        if dsl.ROOT in user_meta:  # adopted (or built) by neardup before: resume
            return self._resume_attached(layout, config)
        if layout.text is None:
            raise EngineError(
                f"{self.location} is not attached yet: name the field holding the text with "
                "--text-field"
            )
        check_fields(self.location, mappings, layout)
        config = config or Config()
        self._preflight(mappings, layout, config)
        return self._adopt(layout, config, user_meta)

    def _check_target(self) -> None:
        """The name ``attach`` was given resolves to one open index (or an alias over one):
        an alias over several indices, a data stream and a closed index are refused
        (:func:`~neardup.engines.elastic.answers.target_problem`) before anything changes."""
        try:
            resolved = self.retry.call(
                "resolve index",
                self.client.indices.resolve_index,
                name=self.index,
                ok_status=(400, 404, 405),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) not in (400, 404, 405):
                raise
            resolved = None  # (an engine without _resolve/index: the mapping tells the rest)
        if resolved is not None:
            problem = target_problem(self.location, resolved)
            if problem:
                raise EngineError(problem)
        elif not bool(
            self.retry.call("index exists", self.client.indices.exists, index=self.index)
        ):
            raise EngineError(f"{self.location}: no such index to attach")

    def _preflight(self, mappings: dict[str, Any], layout: dsl.Layout, config: Config) -> None:
        """Everything ``attach`` needs, checked before it changes anything: ``_source``, the
        index's blocks and field limit, and the clusters and state indices (absent, or
        neardup's own)."""
        problem = source_problem(self.location, mappings, layout.text or "")
        if problem:
            raise EngineError(problem)
        got = self.retry.call(
            "get settings",
            self.client.indices.get_settings,
            index=self.index,
            include_defaults=True,
            flat_settings=True,
        )
        for answer in got.values():
            flat = {
                **flat_settings(answer.get("defaults") or {}),
                **flat_settings(answer.get("settings") or {}),
            }
            problem = settings_problem(
                self.location,
                self.index,
                flat,
                adds=count_fields({dsl.ROOT: dsl.neardup_mapping(config.signatures)}),
                has=count_fields(mappings.get("properties") or {}),
            )
            if problem:
                raise EngineError(problem)
        self._check_own(self.clusters_index, "clusters")
        self._check_own(self.state_index, "state")

    def _resume_attached(self, layout: dsl.Layout, config: Config | None) -> Config:
        """Attach again an index attached (or built) before: its stored layout must agree with
        the fields asked for; fields added to the mapping since, and the pipeline, installed."""
        cfg = self.open(config, create=False)
        given = {
            k: v
            for k, v in layout.to_dict().items()
            if v is not None and k not in ("adopted", "languages")
        }
        wanted = dsl.Layout.from_dict({**self.layout.to_dict(), **given})
        if self.layout != wanted:
            stored = (
                self.layout.describe()
                if self.layout.adopted
                else "neardup's own fields (built by 'neardup index')"
            )
            raise EngineError(
                f"{self.location} is already attached with {stored}, not {wanted.describe()}: "
                "run attach without the field options to go on with the stored ones"
            )
        self.actions.append(
            f"index {self.index} already attached ({self.layout.describe()}) - resuming"
        )
        self.retry.call(
            "put mapping",
            self.client.indices.put_mapping,
            index=self.index,
            body={"properties": {dsl.ROOT: dsl.neardup_mapping(self.config.signatures)}},
        )  # fields added since
        self._attach_pipeline()
        return cfg

    def _adopt(self, layout: dsl.Layout, config: Config, user_meta: dict[str, Any]) -> Config:
        """Adopt an index of the user's: the state index with the settings document and the
        clusters index made, then neardup's fields added to its mapping beside the user's
        (``user_meta`` kept), then the pipeline set. The mapping, the one change to the
        user's index that cannot be undone, comes after the side indices: when it is refused
        they are taken away again, so a refusal leaves no trace."""
        self.layout = layout
        self._config = config
        self._meta = dsl.index_meta(self._config, layout=layout)
        made: list[str] = []  # side indices made here, removed again if the mapping is refused
        try:
            if self._check_own(self.state_index, "state") is None:
                made.append(self.state_index)
            self._ensure_state_index()
            self._create_settings()
            if self._check_own(self.clusters_index, "clusters") is None:
                made.append(self.clusters_index)
                self.retry.call(
                    "create clusters index",
                    self.client.indices.create,
                    index=self.clusters_index,
                    body=dsl.clusters_template(self.index)["template"],
                )
                self.actions.append(f"clusters index {self.clusters_index} created")
            body = dsl.attach_mapping(
                self._config.signatures, dsl.meta_pointer(self.index, self._meta), user_meta
            )
            self.retry.call(
                "put mapping", self.client.indices.put_mapping, index=self.index, body=body
            )
        except BaseException:
            for index in made:
                with contextlib.suppress(Exception):  # the first cause is the one raised
                    self.retry.call(
                        "delete index", self.client.indices.delete, index=index, ok_status=(404,)
                    )
            raise
        self.actions.append(f"mapping of {self.index}: neardup.* added (user fields unchanged)")
        self._attach_pipeline()
        self._next_seq = self._max_seq() + 1
        return self._config

    def _attach_pipeline(self) -> None:
        """The adopted index's ``final_pipeline`` (dsl.attached_pipeline_body): a write by another
        client that changes the signed text drops the stale ``neardup`` fields. Left out with
        ``pipeline=False``, or when the index has a final pipeline of its own."""
        if self.index_setup.pipeline is False:
            return
        pipe = dsl.pipeline_id(self.index)
        got = self.retry.call("get settings", self.client.indices.get_settings, index=self.index)
        current = (
            next(iter(got.values()), {}).get("settings", {}).get("index", {}) if got else {}
        ).get("final_pipeline")
        if current not in (None, "_none", pipe):
            self.actions.append(
                f"{self.index} has its own final_pipeline {current}: documents other clients "
                "change keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        try:
            self.retry.call(
                "put ingest pipeline",
                self.client.ingest.put_pipeline,
                id=pipe,
                body=dsl.attached_pipeline_body(self.layout),
            )
        except EngineError as e:
            if self.index_setup.pipeline:  # asked for: its failure is the command's
                raise
            self.actions.append(
                f"no ingest pipeline on {self.index} ({e}): documents other clients change "
                "keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        if current != pipe:
            self.retry.call(
                "put settings",
                self.client.indices.put_settings,
                index=self.index,
                body=dsl.final_pipeline_settings(pipe),
            )
            self.actions.append(
                f"final_pipeline of {self.index} set to {pipe}: a document whose text another "
                "client changes loses its stale neardup fields"
            )

    def unsigned_documents(
        self, batch_size: int = 500, on_textless: Callable[[str, str], None] | None = None
    ) -> Iterator[Document]:
        """The documents without neardup's fields, in the layout's arrival order (its order
        field, then index order), as Documents to sign and tag. Those whose text field gives
        no text (:func:`field_text`: missing, null, a boolean, an object, empty) are not
        signed: each is told to ``on_textless(id, what the field holds)``, so they can be
        counted exactly."""
        lay = self.layout
        for h in self._pager().snapshot(
            self.index, functools.partial(dsl.unsigned_body, batch_size, layout=lay), batch_size
        ):
            src_id, src = h["_id"], h["_source"]
            raw = source_field(src, lay.text)
            text = field_text(raw)
            if not text:
                if on_textless is not None:
                    on_textless(src_id, json_kind(raw))
                continue
            lang = source_text(src, lay.lang) if lay.lang else None
            self._held.add(src_id)
            yield Document(
                src_id,
                text,
                title=source_text(src, lay.title),
                lang=lang if is_language_code(lang) else None,
            )

    def textless(self) -> int:
        """Documents without neardup's fields and without the text field at all (an estimate
        of what is never signed: :meth:`unsigned_documents` counts exactly, values that give
        no text included)."""
        body = {
            "query": {
                "bool": {"must_not": [dsl.signed_query(), {"exists": {"field": self.layout.text}}]}
            }
        }
        return int(
            self.retry.call("count", self.client.count, index=self.index, body=body)["count"]
        )

    def _set_up(self, server: Server, use_pipeline: bool, new: bool = False) -> None:
        """State index with the settings document, pipeline, templates, both indices, health.

        The clusters and state indices, where they exist, must be neardup's own
        (:meth:`_check_own`) before anything is made. The state index is made first, so a
        cluster that refuses to create indices refuses it before any template is installed;
        a new documents index the cluster refuses takes its templates and pipeline away."""
        self._check_own(self.clusters_index, "clusters")
        self._ensure_state_index()
        pipe = self._install(server, use_pipeline)
        if new:
            try:
                self._create_settings()
                self._create(
                    self.index,
                    "documents index",
                    dsl.shard_settings(self.index_setup.shards, self.index_setup.replicas),
                )
            except BaseException:
                self._uninstall(pipe)
                raise
        elif pipe and not self._meta.get(
            "pipeline"
        ):  # an index built without the pipeline gets it now
            self.retry.call(
                "put settings",
                self.client.indices.put_settings,
                index=self.index,
                body=dsl.default_pipeline_settings(pipe),
            )
            self.put_meta("pipeline", pipe)
            self.actions.append(f"default_pipeline of {self.index} set to {pipe}")
        if not bool(
            self.retry.call("index exists", self.client.indices.exists, index=self.clusters_index)
        ):
            self._create(self.clusters_index, "clusters index")
        else:
            self.actions.append(f"index {self.clusters_index} exists - kept")
        self._wait_healthy()

    def _create_settings(self) -> None:
        """The settings document of a new index; one made meanwhile by another process must
        agree."""
        src = dsl.settings_source(self._meta, _now())
        try:
            self.retry.call(
                "create settings document",
                self.client.create,
                index=self.state_index,
                id=dsl.SETTINGS_ID,
                body=src,
                refresh="true",
                ok_status=(409,),
            )
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
            body = dsl.pipeline_body(
                server.product,
                server.version,
                self._meta.get("signature_version", SIGNATURE_VERSION),
            )
            try:
                self.retry.call(
                    "put ingest pipeline", self.client.ingest.put_pipeline, id=pipe, body=body
                )
            except EngineError as e:
                raise EngineError(
                    f"{e}; if this engine has no ingest pipelines, open the index without one "
                    "(neardup init --no-pipeline, or pipeline=False)"
                ) from None
            fp = (
                " with fingerprint"
                if dsl.supports_fingerprint(server.product, server.version)
                else ""
            )
            self.actions.append(f"ingest pipeline {pipe} installed{fp}")
        docs_t = dsl.documents_template(
            self.index, dsl.meta_pointer(self.index, self._meta), pipe, self.config.signatures
        )
        name = dsl.documents_template_name(self.index)
        self.retry.call(
            "put index template", self.client.indices.put_index_template, name=name, body=docs_t
        )
        self.actions.append(f"index template {name} -> {self.index}")
        cl_t = dsl.clusters_template(self.index)
        name2 = dsl.clusters_template_name(self.index)
        self.retry.call(
            "put index template", self.client.indices.put_index_template, name=name2, body=cl_t
        )
        self.actions.append(f"index template {name2} -> {self.clusters_index}")
        return pipe

    def _uninstall(self, pipe: str | None) -> None:
        """Take away the templates (and pipeline) :meth:`_install` put for a documents index
        that could not be made; what cannot be removed now is said in ``actions``."""
        removals = [
            ("index template", self.client.indices.delete_index_template, {"name": name})
            for name in (
                dsl.documents_template_name(self.index),
                dsl.clusters_template_name(self.index),
            )
        ]
        if pipe:
            removals.append(("ingest pipeline", self.client.ingest.delete_pipeline, {"id": pipe}))
        for what, fn, kw in removals:
            try:
                self.retry.call(f"delete {what}", fn, **kw, ok_status=(404,))
            except Exception:  # noqa: BLE001 -- the first cause is the one raised
                self.actions.append(f"{what} {next(iter(kw.values()))} left: remove it by hand")

    def _check_own(self, index: str, role: str) -> dict[str, Any] | None:
        """The mappings of ``index`` (the clusters or state index of this one) by concrete
        index, None when it does not exist; one that exists but was not made by neardup
        (:func:`~neardup.engines.elastic.dsl.made_by_neardup`) is refused: neardup never writes into
        an index it did not create."""
        try:
            m = self.retry.call(
                "get mapping", self.client.indices.get_mapping, index=index, ok_status=(404,)
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) == 404:
                return None
            raise
        if all(dsl.made_by_neardup((v.get("mappings") or {}).get("_meta")) for v in m.values()):
            return m
        raise EngineError(
            f"{self.url}: index {index} exists and was not created by neardup (its mapping has "
            f"no _meta.managed_by: neardup); neardup keeps the {role} of index {self.index} there "
            "and never writes into an index it did not create: choose another name for the "
            f"documents index (--index NAME: its {role} go to {dsl.clusters_index('NAME')} and "
            f"{dsl.state_index('NAME')}), or move that index away"
        )

    def _create(self, index: str, what: str, body: dict[str, Any] | None = None) -> None:
        try:
            self.retry.call(
                f"create {what}",
                self.client.indices.create,
                index=index,
                body=body,
                ok_status=(400,),
            )
            self.actions.append(f"{what} {index} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" in describe(e):  # created meanwhile by another process
                self.actions.append(f"{what} {index} exists - kept")
                return
            raise EngineError(f"{self.url}: cannot create {what} {index}: {describe(e)}") from None

    def _ensure_state_index(self) -> None:
        """The state index (write lease, settings), created with its own mapping if absent;
        one that exists must be neardup's own."""
        if self._check_own(self.state_index, "state") is not None:
            return
        body = dsl.state_index_body()
        try:
            self.retry.call(
                "create state index",
                self.client.indices.create,
                index=self.state_index,
                body=body,
                ok_status=(400,),
            )
            self.actions.append(f"state index {self.state_index} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" not in describe(e):
                raise EngineError(
                    f"{self.url}: cannot create state index {self.state_index}: {describe(e)}"
                ) from None

    def _wait_healthy(self) -> None:
        kw: dict[str, Any] = {
            "index": f"{self.index},{self.clusters_index}",
            "wait_for_status": "yellow",
            "timeout": self.index_setup.health_timeout,
        }
        if self.product == "opensearch":
            kw["request_timeout"] = self.connection.request_timeout + 30
        health = self.retry.call("cluster health", self.client.cluster.health, **kw)
        if health.get("status") not in ("yellow", "green"):
            raise EngineError(
                f"{self.location}: cluster health is {health.get('status')} after "
                f"{self.index_setup.health_timeout}; the index cannot be written (check shards and "
                "disk)"
            )

    def _read_meta(self) -> dict[str, Any]:
        """``_meta.neardup`` of the documents index (a pointer; older indices: the settings)."""
        m = self.retry.call("get mapping", self.client.indices.get_mapping, index=self.index)
        mappings = next(iter(m.values()), {}).get("mappings", {}) if m else {}
        return dict((mappings.get("_meta") or {}).get("neardup") or {})

    def _read_settings(self) -> dict[str, Any]:
        """The index's settings: the settings document the ``_meta`` pointer names (indices of
        older versions kept them in ``_meta`` itself)."""
        pointer = self._read_meta()
        if "config" in pointer or (
            pointer.get("settings") and pointer.get("layout") != dsl.LAYOUT_VERSION
        ):
            raise EngineError(
                f"{self.location} was built by an older neardup (its fields at the top level); "
                "build a new index with this version, or adopt the documents in place with "
                "'neardup attach'"
            )
        if not pointer.get("settings"):
            raise EngineError(
                f"{self.location} exists but is not a neardup index (no _meta.neardup in its "
                "mapping); to use an existing index, adopt it with 'neardup attach'"
            )
        return self._read_settings_doc()

    def _read_settings_doc(self) -> dict[str, Any]:
        try:
            r = self.retry.call(
                "read settings",
                self.client.get,
                index=self.state_index,
                id=dsl.SETTINGS_ID,
                ok_status=(404,),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) != 404:
                raise
            r = {}
        data = (r.get("_source") or {}).get("data") if r.get("found") else None
        if not data or "config" not in data:
            raise EngineError(
                f"{self.location}: its settings document {self.state_index}/{dsl.SETTINGS_ID} is "
                "missing; run 'neardup init' on it again"
            )
        return dict(data)

    def _max_seq(self) -> int:
        r = self.retry.call(
            "max seq", self.client.search, index=self.index, body=dsl.max_seq_body()
        )
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
            self.retry.call(
                "write settings",
                self.client.index,
                index=self.state_index,
                id=dsl.SETTINGS_ID,
                body=src,
                refresh="true",
            )
            self._meta = meta

    # -- write sessions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """An exclusive write session across processes (the lease of ``<index>-neardup-state``).

        Waits while another writer holds the lease (``on_wait`` and the log say who); once
        held, reads the largest ``seq`` (numbers are assigned after it) and refreshes before
        releasing, so the next holder's candidate queries see every write of this one.
        Sessions nest; write calls outside a session open one of their own. Inside
        :meth:`writes_in_a_row` the lease is kept over the sessions that follow, for up to
        :attr:`~neardup.engines.elastic.options.LeaseTimes.hold` seconds, and the documents
        they store are matched in this process (:meth:`candidates`)."""
        if self._session_depth:
            self._session_depth += 1
            try:
                yield
            finally:
                self._session_depth -= 1
            return
        if self._hold is None:
            self._take_lease()
        self._session_depth = 1
        ok = False
        try:
            yield
            ok = True
        finally:
            self._session_depth = 0
            if self._hold is None or not ok:
                self._hand_over(quiet=not ok)
            elif self._hold.expired(self.lease_times.hold):
                self._hand_over()  # (other writers get their turn)

    def _take_lease(self) -> None:
        """Take the lease (waiting for another writer's), and start what a holder knows: the
        next arrival number, and in a run (:meth:`writes_in_a_row`) the documents matched here."""
        lease = self._lease_of()
        lease.acquire()
        lease.keep_alive()
        self._dirty = False
        try:
            if lease.took_over:  # a holder that died may not have made its last writes visible
                self.refresh()
            self._next_seq = max(self._next_seq, self._max_seq() + 1)
        except BaseException:
            with contextlib.suppress(EngineError):  # the first cause is the one told
                lease.release()
            raise
        if self._in_run:
            self._hold = _Hold(start_seq=self._next_seq)

    def _hand_over(self, quiet: bool = False) -> None:
        """End the lease holder's turn: refresh what it wrote (the next holder's reads must
        see every write), then release the lease. ``quiet``: a session that failed hands
        over too, and a refresh that fails then does not hide its error."""
        self._hold = None
        try:
            if self._dirty:
                self.refresh()
        except Exception:
            if not quiet:
                raise
        finally:
            if self._lease is not None and self._lease.held:
                # a failed session's error is the one told, not a release refused after it
                # (by the same block): the lease is taken over once this process is gone
                with contextlib.suppress(*((EngineError,) if quiet else ())):
                    self._lease.release()

    @contextlib.contextmanager
    def writes_in_a_row(self) -> Iterator[None]:
        """Around the writer sessions of one run (an ``index`` or ``attach`` pass): the lease
        is kept from one session to the next (handed over at most every ``hold`` seconds),
        the documents the run stores are matched in this process, so the engine is asked only
        about documents stored before (or by another writer between two turns), and the
        index is refreshed when the lease is handed over, not after every batch."""
        if self._in_run or self._session_depth:
            yield
            return
        self._in_run = True
        try:
            yield
        finally:
            self._in_run = False
            if self._hold is not None:
                self._hand_over()

    def _see_writes(self) -> None:
        """Make this session's writes visible before a search that must see them."""
        if self._dirty:
            self.refresh()

    def _lease_of(self) -> Lease:
        if self._lease is None:
            self._ensure_state_index()
            self._lease = Lease(
                self.client,
                self.state_index,
                self.retry,
                duration=self.lease_times.duration,
                timeout=self.lease_times.timeout,
                on_wait=self._waiting,
                on_take_over=self._took_over,
                sleep=self.backoff.sleep,
            )
        return self._lease

    def _waiting(self, holder: Holder, waited: float) -> None:
        """The lease's report of a wait: ``on_wait`` told once per holder."""
        if self.on_wait is not None and holder.owner not in self._waited_for:
            self._waited_for.add(holder.owner)
            self.on_wait(f"waiting for another writer ({holder.describe()})")

    def _took_over(self, holder: Holder, why: str) -> None:
        """The lease's report of a lease taken over from a writer that is gone."""
        if self.on_wait is not None:
            self.on_wait(f"took over the write lease of {holder.describe()}: {why}")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """The current session (renewed) or a session for this one call."""
        with self.writer():
            assert self._lease is not None
            self._lease.renew()
            self._dirty = True
            yield

    # -- writes ------------------------------------------------------------------------------
    def put(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags] | None = None,
        *,
        prepared: PreparedBatch | None = None,
    ) -> list[Failure]:
        """Store signed documents; every one refused (before sending: an id over 512 bytes,
        text that is not valid Unicode; by the engine: its reason) is returned, the others
        are stored. Nothing is prepared in advance (``prepared`` is always None here)."""
        tags = tags or {}
        docs = list(docs)
        if not docs:
            return []
        good, failures = _checked(docs)
        if not good:
            return failures
        with self._writing():
            found: set[str] = set()
            seqs = self._assign_seq([s.id for s in good], found)
            now = _now()
            version = self.config.version
            actions = [
                dsl.index_action(
                    self.index,
                    s,
                    tags.get(s.id),
                    seqs[s.id],
                    now,
                    self.layout,
                    version,
                    create=s.id not in found and s.id not in self._held,
                )
                for s in good
            ]
            self._held.difference_update(seqs)
            failures += self._bulker().run(actions, "index documents").failures
            self._remember(good, tags, seqs, {f.id for f in failures})
            if self.index_setup.refresh_on_write and self._hold is None:
                self.refresh()
        return failures

    @property
    def _shingle_sets(self) -> ShingleColumn:
        """Shingle sets made again from stored texts, and those this process stored."""
        if self._shingles is None:
            self._shingles = ShingleColumn(self.config, ShingleCache(SHINGLE_CACHE_BYTES))
        return self._shingles

    def _remember(
        self,
        docs: Sequence[Signed],
        tags: dict[str, Tags],
        seqs: dict[str, int],
        failed: set[str],
    ) -> None:
        """Documents a run stored, matched here from now on (:class:`_Hold`)."""
        stored = [s for s in docs if s.id not in failed]
        for s in stored:
            if len(column(s)) != 8 * s.n_shingles:  # (a marker: kept to verify against)
                self._shingle_sets.remember(_set_key(s.exact, s.lang), s.shingles)
        hold = self._hold
        if hold is None:
            return
        if any(seqs[s.id] < hold.start_seq for s in stored):
            hold.stale = True  # the engine holds an older version of a document stored before
        hold.recent.add(
            [
                Entry(
                    id=s.id,
                    seq=seqs[s.id],
                    n_shingles=int(s.n_shingles),
                    simhash=int(s.simhash),
                    keys=s.keys,
                    tags=tags.get(s.id),
                )
                for s in stored
            ]
        )

    def _assign_seq(self, ids: list[str], found: set[str] | None = None) -> dict[str, int]:
        """Existing documents keep their arrival number; new ones get the next ones. The ids
        of the documents the index holds (signed or not) are added to ``found``."""
        uniq = list(dict.fromkeys(ids))
        old: dict[str, int] = {}
        for chunk in chunks(uniq, 1000):
            body = dsl.existing_seq_body(chunk)
            r = self.retry.call("mget", self.client.mget, index=self.index, body=body)
            for d in r.get("docs", []):
                if d.get("found") and found is not None:
                    found.add(d["_id"])
                seq = neardup_part(d.get("_source")).get("seq") if d.get("found") else None
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

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self._writing():
            actions = [dsl.delete_action(self.index, i) for i in ids]
            deleted = (
                self._bulker()
                .run_or_raise(actions, "delete documents", ignore_missing=True)
                .deleted
            )
            self._forget(ids)
            if self.index_setup.refresh_on_write and self._hold is None:
                self.refresh()
        return deleted

    def update_tags(self, tags: dict[str, Tags]) -> None:
        if not tags:
            return
        with self._writing():
            actions = [dsl.update_tags_action(self.index, i, t) for i, t in tags.items()]
            self._bulker().run_or_raise(actions, "update tags", ignore_missing=True)
            if self._hold is not None:
                for i, t in tags.items():
                    if i in self._hold.recent:
                        self._hold.recent.set_tags(i, t)
                    else:
                        self._hold.stale = True
            if self.index_setup.refresh_on_write and self._hold is None:
                self.refresh()

    def _forget(self, ids: Sequence[str]) -> None:
        """Deleted documents: no longer matched here; one stored before the run makes the
        engine's answers stale until a refresh."""
        if self._hold is None:
            return
        for i in ids:
            if i in self._hold.recent:
                self._hold.recent.remove(i)
            else:
                self._hold.stale = True

    def refresh(self) -> None:
        """Make every write searchable; a refresh some shard copy failed (a node lost, a primary
        being promoted) is sent again, so the next candidate search sees the last batch."""

        def send(_: Sequence[int], last: bool) -> list[int]:
            r = self.retry.call(
                "refresh", self.client.indices.refresh, index=f"{self.index},{self.clusters_index}"
            )
            failed = (r.get("_shards") or {}).get("failed", 0) if r else 0
            if failed and not last:
                return [0]
            if failed:
                raise EngineError(f"{self.location}: refresh failed on {failed} shard copies")
            return []

        self.backoff.resend([0], send)
        self._dirty = False

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Candidates of each query. Inside a run (:meth:`writes_in_a_row`) the documents it
        stored are matched here (:class:`~neardup.engines.elastic.key_match.KeyMatcher`, the rule of
        the engine's query), and the engine is asked only about those stored before, and
        not at all when the index held none."""
        hold = self._hold
        if hold is None:
            return self._stored_candidates(queries)
        local = hold.recent.candidates(queries)
        if hold.start_seq <= 1:  # (nothing was stored before this turn)
            return local
        if hold.stale:
            self.refresh()
            hold.stale = False
        before = [
            dataclasses.replace(
                q,
                before_seq=hold.start_seq
                if q.before_seq is None
                else min(q.before_seq, hold.start_seq),
            )
            for q in queries
        ]
        remote = self._stored_candidates(before)
        return [merged(a, b, q.limit) for a, b, q in zip(local, remote, queries, strict=True)]

    def _stored_candidates(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """Candidates of each query from the engine's index: many queries in one search over
        all their keys (:meth:`_candidates_by_keys`), else one search each by ``_msearch``."""
        if self.paging.batched_candidates and len(queries) > 1:
            return self._candidates_by_keys(queries)
        out: list[list[Candidate]] = [[] for _ in queries]
        todo = [(i, dsl.candidate_body(q, self.paging.max_clauses)) for i, q in enumerate(queries)]
        todo = [(i, b) for i, b in todo if b is not None]
        for batch in chunks(todo, self.paging.msearch_batch):
            for (i, _), resp in zip(batch, self._msearch([b for _, b in batch]), strict=True):
                out[i] = [candidate_of(h) for h in resp["hits"]["hits"]]
        return out

    def _candidates_by_keys(self, queries: Sequence[CandidateQuery]) -> list[list[Candidate]]:
        """The stored documents holding any key of ``queries`` (:func:`dsl.keys_body`, page
        after page), matched to each query here by the rule of the engine's candidate query
        (:class:`~.key_match.KeyMatcher`): one search for a whole batch instead
        of one per document."""
        held = KeyMatcher()
        size, after = self.paging.page_size, None
        while (body := dsl.keys_body(queries, size, after)) is not None:
            hits = self._search_every_shard(body, "candidate search")
            held.add([entry_of(h) for h in hits])
            if len(hits) < size:
                break
            after = hits[-1]["sort"]
        return held.candidates(queries)

    def _search_every_shard(self, body: dict[str, Any], what: str) -> list[dict[str, Any]]:
        """The hits of one search; an answer from only some of the shards (a node lost, a
        primary not yet promoted) is asked again with backoff, then refused."""
        answer: list[dict[str, Any]] = []

        def send(_: Sequence[int], last: bool) -> list[int]:
            r = self.retry.call(what, self.client.search, index=self.index, body=body)
            missing = missing_shards(r)
            if missing and not last:
                return [0]
            if missing:
                raise EngineError(
                    f"{self.location}: {what} answered from only some shards ({missing})"
                )
            answer.extend(r["hits"]["hits"])
            return []

        self.backoff.resend([0], send)
        return answer

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Responses in order; items refused with 429, and answers from only some of the
        shards (a node lost, a primary not yet promoted), are sent again with backoff."""
        results: list[dict[str, Any] | None] = [None] * len(bodies)

        def send(pending: Sequence[int], last: bool) -> list[int]:
            lines = dsl.msearch_lines(self.index, [bodies[i] for i in pending])
            r = self.retry.call("msearch", self.client.msearch, body=lines)
            again = []
            for i, resp in zip(pending, r["responses"], strict=True):
                if "error" in resp:
                    if resp.get("status") in (429, 503) and not last:
                        again.append(i)
                        continue
                    raise EngineError(
                        f"{self.location}: candidate search failed: {error_reason(resp)}"
                    )
                missing = missing_shards(resp)
                if missing:  # a partial answer would miss near-duplicates on the other shards
                    if not last:
                        again.append(i)
                        continue
                    raise EngineError(
                        f"{self.location}: candidate search answered from only some shards "
                        f"({missing})"
                    )
                results[i] = resp
            return again

        self.backoff.resend(range(len(bodies)), send)
        return results  # type: ignore[return-value]

    def collisions(self, fields: Sequence[str] = ("minhash",)) -> Iterator[list[str]]:
        self._see_writes()
        for f in fields:
            if f not in self.config.signatures:
                continue
            key, group = None, []
            body_of = functools.partial(dsl.collisions_body, f, self.paging.agg_page_size)
            for b in self._pager().buckets(self.index, body_of, "pairs", "collisions"):
                k, doc = b["key"]["key"], b["key"]["id"]
                if k != key:
                    if len(group) > 1:
                        yield group
                    key, group = k, []
                group.append(doc)
            if len(group) > 1:
                yield group

    # -- reads ---------------------------------------------------------------------------------
    def get(
        self, ids: Iterable[str], *, text: bool = False, keys: bool = True
    ) -> dict[str, StoredDoc]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredDoc] = {}
        for chunk in chunks(ids, 500):
            body = dsl.mget_body(chunk, True, self.layout)  # (the text makes the shingles)
            r = self.retry.call("mget", self.client.mget, index=self.index, body=body)
            found = [
                d["_source"]
                for d in r.get("docs", [])
                if d.get("found") and is_signed(d.get("_source"))
            ]
            for sd in self._stored_docs(found, text, keys):
                out[sd.id] = sd
        return out

    def _stored_docs(
        self, sources: Sequence[dict[str, Any]], text: bool, with_keys: bool = True
    ) -> list[StoredDoc]:
        """The documents of ``_source`` objects read with their text; shingles stored as a
        marker are made again from the text (:mod:`~neardup.engines.embedded.shingle_column`),
        all of a read at once, through a bounded cache that also holds what this process
        stored."""
        docs = [self._stored(src, text, with_keys) for src in sources]
        todo = [i for i, d in enumerate(docs) if d.shingles is None]
        if todo:
            rows = []
            for i in todo:
                nd = sources[i][dsl.ROOT]
                rows.append(
                    (
                        _set_key(nd.get("exact"), nd.get("lang")),
                        base64.b64decode(nd["shingles"]),
                        docs[i].n_shingles,
                        stored_text(sources[i], self.layout, self.layout.text),
                    )
                )
            for i, made in zip(todo, self._shingle_sets.sets(rows), strict=True):
                docs[i].shingles = made
        return docs

    def _stored(self, src: dict[str, Any], text: bool, with_keys: bool = True) -> StoredDoc:
        nd, lay = src[dsl.ROOT], self.layout
        keys = nd.get("keys") or {}
        return StoredDoc(
            id=nd["id"],
            lang=nd.get("lang"),
            n_shingles=int(nd.get("n_shingles") or 0),
            shingles=stored_shingles(nd),  # (None: made from the text, _stored_docs)
            simhash=int(nd.get("simhash") or "0", 16),
            exact=nd.get("exact"),
            keys={f: parse_keys(f, keys.get(f, [])) for f in self.config.signatures}
            if with_keys
            else {},
            tags=tags_of(nd),
            title=stored_text(src, lay, lay.title),
            text=stored_text(src, lay, lay.text) if text else None,
            fields=dict(src.get("fields") or {}) if not lay.adopted else {},
            indexed_at=nd.get("indexed_at"),
            seq=int(nd.get("seq") or 0),
            ordered_at=self._order_date(src) if lay.order else None,
            too_short=bool(nd.get("too_short")),
        )

    @property
    def order_field(self) -> str | None:  # type: ignore[override]
        return self.layout.order if self.layout.adopted else None

    def _order_date(self, src: dict[str, Any]) -> str | None:
        """The order field's value as a date (:func:`order_date`); a number is one only in a
        ``date`` or ``date_nanos`` field (epoch milliseconds), as the mapping says."""
        v: Any = src
        for part in (self.layout.order or "").split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, list):
            v = v[0] if v else None
        if (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and self._order_type() not in ("date", "date_nanos")
        ):
            return None
        return order_date(v)

    def _order_type(self) -> str | None:
        """The mapped type of the adopted index's order field (read once)."""
        if self._order_type_cache is None:
            m = self.retry.call("get mapping", self.client.indices.get_mapping, index=self.index)
            spec = field_mapping(
                next(iter(m.values()), {}).get("mappings", {}) if m else {}, self.layout.order or ""
            )
            self._order_type_cache = ((spec or {}).get("type"),)
        return self._order_type_cache[0]

    def scan(self, *, text: bool = False, batch_size: int = 1000) -> Iterator[StoredDoc]:
        self._see_writes()
        body_of = functools.partial(dsl.scan_body, batch_size, text=True, layout=self.layout)
        page: list[dict[str, Any]] = []
        for h in self._pager().snapshot(self.index, body_of, batch_size):
            page.append(h["_source"])
            if len(page) >= batch_size:
                yield from self._stored_docs(page, text)
                page = []
        yield from self._stored_docs(page, text)

    def scan_tags(self, *, batch_size: int = 5000) -> Iterator[TagRow]:
        self._see_writes()
        body_of = functools.partial(dsl.tag_scan_body, batch_size, layout=self.layout)
        for h in self._pager().snapshot(self.index, body_of, batch_size):
            yield tag_row(h["_source"], self.layout)

    def members(self, representatives: Iterable[str]) -> dict[str, list[str]]:
        self._see_writes()
        out: dict[str, list[str]] = {}
        for chunk in chunks(list(dict.fromkeys(representatives)), 1000):
            body_of = functools.partial(dsl.members_body, chunk, self.paging.page_size)
            for h in self._pager().hits(self.index, body_of, self.paging.page_size, "members"):
                nd = neardup_part(h["_source"])
                out.setdefault(nd["dup_of"], []).append(nd.get("id") or h["_id"])
        return out

    def _pager(self) -> Pager:
        return Pager(self.client, self.product, self.retry)

    def _bulker(self) -> BulkStreamer:
        return BulkStreamer(self.client, self._helpers, self.retry, self.paging.chunk_size)

    def count(self) -> int:
        """Documents neardup has signed."""
        self._see_writes()
        return int(
            self.retry.call("count", self.client.count, index=self.index, body=dsl.count_body())[
                "count"
            ]
        )

    def unsigned(self) -> int:
        """Documents of the index without neardup's fields (written by other clients): every
        read skips them; ``neardup attach`` signs them."""
        self._see_writes()
        return int(
            self.retry.call(
                "count", self.client.count, index=self.index, body=dsl.count_body(False)
            )["count"]
        )

    # -- full-text search -------------------------------------------------------------------------
    def search(self, query: str | dict, size: int = 10) -> list[Hit]:
        self._see_writes()
        body = dsl.fulltext_body(query, size, self.layout, self.paging.max_clauses)
        r = self.retry.call("search", self.client.search, index=self.index, body=body)
        return [hit_of(h, self.layout) for h in r["hits"]["hits"]]

    collapses_search = True
    writes_wait_on_a_server = True

    def search_collapsed(self, query: str | dict, size: int = 10) -> list[Hit]:
        """Search with near-copies folded: tagged hits collapse on ``cluster_id`` (their
        copies in ``folded``), untagged hits stay as they are; merged by score."""
        self._see_writes()
        tagged, untagged = dsl.collapsed_bodies(
            query, size, layout=self.layout, max_clauses=self.paging.max_clauses
        )
        a, b = self._msearch_index([tagged, untagged])
        hits = []
        for h in a["hits"]["hits"]:
            hit = hit_of(h, self.layout)
            inner = (
                ((h.get("inner_hits") or {}).get("copies") or {}).get("hits", {}).get("hits", [])
            )
            hit.folded = [x["_id"] for x in inner if x["_id"] != hit.id]
            hits.append(hit)
        hits.extend(hit_of(h, self.layout) for h in b["hits"]["hits"])
        hits.sort(key=lambda h: -h.score)  # stable: ties keep engine order
        return hits[:size]

    def _msearch_index(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines = dsl.msearch_lines(self.index, bodies)
        r = self.retry.call("search", self.client.msearch, body=lines)
        for resp in r["responses"]:
            if "error" in resp:
                raise EngineError(f"{self.location}: search failed: {error_reason(resp)}")
        return r["responses"]

    # -- clusters --------------------------------------------------------------------------------
    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        """Store the clusters in ``<index>-clusters`` (which must be neardup's own): each
        one replaced by id, and those neardup wrote before that are no longer clusters
        deleted; documents without neardup's mark (``managed_by``) are never touched."""
        self._mark_clusters_index()
        with self._writing():
            now = _now()
            new_ids = {c.cluster_id for c in clusters}
            stale = [i for i in self._cluster_ids() if i not in new_ids]
            actions = [dsl.cluster_action(self.index, c, now) for c in clusters]
            actions += [
                {"_op_type": "delete", "_index": self.clusters_index, "_id": i} for i in stale
            ]
            self._bulker().run_or_raise(actions, "write clusters", ignore_missing=True)
            self.refresh()

    def _mark_clusters_index(self) -> None:
        """Refuse a clusters index neardup did not create; map ``managed_by`` in one made
        before the mark (its mapping is strict)."""
        m = self._check_own(self.clusters_index, "clusters")
        if m is None:
            return
        if all(
            "managed_by" in ((v.get("mappings") or {}).get("properties") or {}) for v in m.values()
        ):
            return
        self.retry.call(
            "put mapping",
            self.client.indices.put_mapping,
            index=self.clusters_index,
            body={"properties": {"managed_by": {"type": "keyword"}}},
        )

    def _cluster_ids(self) -> Iterator[str]:
        body_of = functools.partial(dsl.cluster_ids_body, self.paging.page_size)
        for h in self._pager().hits(
            self.clusters_index, body_of, self.paging.page_size, "read clusters"
        ):
            yield h["_id"]

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        size = self.paging.page_size if limit is None else max(1, min(self.paging.page_size, limit))
        hits = self._pager().hits(
            self.clusters_index,
            functools.partial(dsl.read_clusters_body, size),
            size,
            "read clusters",
        )
        return [cluster_record(h["_source"]) for h in itertools.islice(hits, limit)]
