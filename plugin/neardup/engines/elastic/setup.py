"""Setting up the HTTP engine's index: opening reads its settings document; creating it, or
``setup`` (what ``neardup init`` runs), installs the index templates, the ingest pipeline
(``ingest_pipeline/neardup.json``, the templates' ``default_pipeline``), the state index with
the settings document, and creates the documents and ``<index>-clusters`` indices
idempotently. The clusters and state indices must be neardup's own: neardup never writes into
an index it did not create.
"""

from __future__ import annotations

from typing import Any, Callable

from ...config import SIGNATURE_VERSION, Config
from ..base import EngineError
from ..transport import Server, describe, status_of
from . import templates
from .layout import Layout
from .index import Index, utc_now

#: The id of :meth:`SetUp.check_bulk`'s delete: no document of neardup's has it.
CHECK_ID = "neardup-privilege-check"


class SetUp:
    """The set-up of ``remote``'s indices, templates and pipeline (its steps told in
    ``remote.actions``); ``put_meta(key, value)`` stores a value in the settings document, inside
    a write session."""

    def __init__(self, remote: Index, put_meta: Callable[[str, Any], None]):
        self.remote = remote
        self.put_meta = put_meta

    def read_config(self) -> Config | None:
        """The stored settings (and layout) of the index, None when it does not exist."""
        self.remote.connect()
        self.remote.actions = []
        if not self.remote.exists(self.remote.name):
            return None
        self.remote.meta = self._read_settings()
        self.remote.layout = Layout.from_dict(self.remote.meta.get("layout"))
        return Config.from_dict(self.remote.meta["config"])

    def create_index(self, config: Config) -> Config:
        """Make the missing index with ``config`` (:meth:`set_up`)."""
        self.remote.opened = config
        use = self.remote.index_setup.pipeline is not False
        self.remote.meta = templates.index_meta(
            config,
            pipeline=templates.pipeline_id(self.remote.name) if use else None,
            layout=self.remote.layout,
        )
        self.set_up(
            self.remote.connect(), use, new=True
        )  # a settings document made meanwhile must agree
        return config

    def after_open(self, created: bool) -> None:
        """An index that existed is kept; ``setup`` installs its templates and pipeline again."""
        if not created:
            self.remote.actions.append(
                f"index {self.remote.name} exists (settings "
                f"{self.remote.meta.get('fingerprint')}) - kept"
            )
            if self.remote.index_setup.setup:
                self.set_up(
                    self.remote.connect(),
                    bool(self.remote.meta.get("pipeline"))
                    if self.remote.index_setup.pipeline is None
                    else self.remote.index_setup.pipeline,
                )

    def set_up(self, server: Server, use_pipeline: bool, new: bool = False) -> None:
        """State index with the settings document, pipeline, templates, both indices, health.

        The clusters and state indices, where they exist, must be neardup's own
        (:meth:`check_own`) before anything is made. The state index is made first, so a
        cluster that refuses to create indices refuses it before any template is installed;
        a new documents index the cluster refuses takes its templates and pipeline away."""
        self.check_own(self.remote.clusters, "clusters")
        state_exists = self.check_own(self.remote.state, "state") is not None
        self.check_first(use_pipeline, state_exists)
        self.ensure_state_index(state_exists)
        pipe = self._install(server, use_pipeline)
        if new:
            try:
                self.create_settings()
                self._create(
                    self.remote.name,
                    "documents index",
                    templates.shard_settings(
                        self.remote.index_setup.shards, self.remote.index_setup.replicas
                    ),
                )
            except BaseException:
                self._uninstall(pipe)
                raise
        elif pipe and not self.remote.meta.get(
            "pipeline"
        ):  # an index built without the pipeline gets it now
            self.remote.retry.call(
                "put settings",
                self.remote.client.indices.put_settings,
                index=self.remote.name,
                body=templates.default_pipeline_settings(pipe),
            )
            self.put_meta("pipeline", pipe)
            self.remote.actions.append(f"default_pipeline of {self.remote.name} set to {pipe}")
        if not bool(
            self.remote.retry.call(
                "index exists", self.remote.client.indices.exists, index=self.remote.clusters
            )
        ):
            self._create(self.remote.clusters, "clusters index")
        else:
            self.remote.actions.append(f"index {self.remote.clusters} exists - kept")
        self._wait_healthy()

    def create_settings(self) -> None:
        """The settings document of a new index; one made meanwhile by another process must
        agree."""
        src = templates.settings_source(self.remote.meta, utc_now())
        try:
            self.remote.retry.call(
                "create settings document",
                self.remote.client.create,
                index=self.remote.state,
                id=templates.SETTINGS_ID,
                body=src,
                refresh="true",
                ok_status=(409,),
            )
            self.remote.actions.append(
                f"settings document {self.remote.state}/{templates.SETTINGS_ID} created"
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) != 409:
                raise
            theirs = self._read_settings_doc()
            assert self.remote.opened is not None
            self.remote.opened.check_same(Config.from_dict(theirs["config"]), self.remote.location)
            self.remote.meta = theirs

    def check_first(self, use_pipeline: bool, state_exists: bool) -> None:
        """Ask first, with requests that need the privileges of :meth:`set_up`'s steps and
        change nothing, so a role without one is refused before anything is made: the
        cluster's health (``cluster:monitor/health``), the pipeline and the documents template
        read by name (the privileges that manage them), the settings document read (the
        state index's document privileges) and, while the state index does not exist,
        :meth:`check_bulk`."""
        self.remote.retry.call("cluster health", self.remote.client.cluster.health)
        gets = [
            (
                "get index template",
                self.remote.client.indices.get_index_template,
                {"name": templates.documents_template_name(self.remote.name)},
            ),
            (
                "read settings",
                self.remote.client.get,
                {"index": self.remote.state, "id": templates.SETTINGS_ID},
            ),
        ]
        if use_pipeline:
            pipe = templates.pipeline_id(self.remote.name)
            gets.insert(
                0, ("get ingest pipeline", self.remote.client.ingest.get_pipeline, {"id": pipe})
            )
        for what, fn, kw in gets:
            try:
                self.remote.retry.call(what, fn, **kw, ok_status=(404,))
            except Exception as e:  # noqa: BLE001
                if status_of(e) != 404:
                    raise
        if not state_exists:
            self.check_bulk(self.remote.state)

    def check_bulk(self, index: str) -> None:
        """A bulk request that deletes a document from ``index``, an index that does not exist
        yet (a delete never creates one), by an id neardup never stores: the cluster checks
        the bulk privilege (OpenSearch writes every document through it) and changes
        nothing."""
        actions = [{"_op_type": "delete", "_index": index, "_id": CHECK_ID}]
        self.remote.retry(
            "bulk",
            lambda: self.remote.helpers.bulk(self.remote.client, actions, raise_on_error=False),
            index=index,
        )

    def _install(self, server: Server, use_pipeline: bool) -> str | None:
        """Pipeline (optional) and both templates; PUT is idempotent."""
        pipe = None
        if use_pipeline:
            pipe = templates.pipeline_id(self.remote.name)
            body = templates.pipeline_body(
                server.product,
                server.version,
                self.remote.meta.get("signature_version", SIGNATURE_VERSION),
            )
            try:
                self.remote.retry.call(
                    "put ingest pipeline",
                    self.remote.client.ingest.put_pipeline,
                    id=pipe,
                    body=body,
                )
            except EngineError as e:
                raise EngineError(
                    f"{e}; if this engine has no ingest pipelines, open the index without one "
                    "(neardup init --no-pipeline, or pipeline=False)"
                ) from None
            fp = (
                " with fingerprint"
                if templates.supports_fingerprint(server.product, server.version)
                else ""
            )
            self.remote.actions.append(f"ingest pipeline {pipe} installed{fp}")
        docs_t = templates.documents_template(
            self.remote.name,
            templates.meta_pointer(self.remote.name, self.remote.meta),
            pipe,
            self.remote.config.signatures,
        )
        for name, body, target in (
            (templates.documents_template_name(self.remote.name), docs_t, self.remote.name),
            (
                templates.clusters_template_name(self.remote.name),
                templates.clusters_template(self.remote.name),
                self.remote.clusters,
            ),
        ):
            self.remote.retry.call(
                "put index template",
                self.remote.client.indices.put_index_template,
                name=name,
                body=body,
            )
            self.remote.actions.append(f"index template {name} -> {target}")
        return pipe

    def _uninstall(self, pipe: str | None) -> None:
        """Take away the templates (and pipeline) :meth:`_install` put for a documents index
        that could not be made; what cannot be removed now is said in ``actions``."""
        removals = [
            ("index template", self.remote.client.indices.delete_index_template, {"name": name})
            for name in (
                templates.documents_template_name(self.remote.name),
                templates.clusters_template_name(self.remote.name),
            )
        ]
        if pipe:
            removals.append(
                ("ingest pipeline", self.remote.client.ingest.delete_pipeline, {"id": pipe})
            )
        for what, fn, kw in removals:
            try:
                self.remote.retry.call(f"delete {what}", fn, **kw, ok_status=(404,))
            except Exception:  # noqa: BLE001 -- the first cause is the one raised
                self.remote.actions.append(
                    f"{what} {next(iter(kw.values()))} left: remove it by hand"
                )

    def check_own(self, index: str, role: str) -> dict[str, Any] | None:
        """The mappings of ``index`` (the clusters or state index of this one) by concrete
        index, None when it does not exist; one that exists but was not made by neardup
        (:func:`~.templates.made_by_neardup`) is refused: neardup never writes into
        an index it did not create."""
        try:
            m = self.remote.retry.call(
                "get mapping", self.remote.client.indices.get_mapping, index=index, ok_status=(404,)
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) == 404:
                return None
            raise
        if all(
            templates.made_by_neardup((v.get("mappings") or {}).get("_meta")) for v in m.values()
        ):
            return m
        raise EngineError(
            f"{self.remote.url}: index {index} exists and was not created by neardup (its mapping "
            f"has no _meta.managed_by: neardup); neardup keeps the {role} of index "
            f"{self.remote.name} "
            "there and never writes into an index it did not create: choose another name for the "
            f"documents index (--index NAME: its {role} go to "
            f"{templates.clusters_index('NAME')} and {templates.state_index('NAME')}), or move "
            "that index away"
        )

    def _create(self, index: str, what: str, body: dict[str, Any] | None = None) -> None:
        try:
            self.remote.retry.call(
                f"create {what}",
                self.remote.client.indices.create,
                index=index,
                body=body,
                ok_status=(400,),
            )
            self.remote.actions.append(f"{what} {index} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" in describe(e):  # created meanwhile by another process
                self.remote.actions.append(f"{what} {index} exists - kept")
                return
            raise EngineError(
                f"{self.remote.url}: cannot create {what} {index}: {describe(e)}"
            ) from None

    def ensure_state_index(self, exists: bool | None = None) -> None:
        """The state index (write lease, settings), created with its own mapping if absent;
        one that exists must be neardup's own (``exists``: already checked)."""
        if exists or (exists is None and self.check_own(self.remote.state, "state") is not None):
            return
        body = templates.state_index_body()
        try:
            self.remote.retry.call(
                "create state index",
                self.remote.client.indices.create,
                index=self.remote.state,
                body=body,
                ok_status=(400,),
            )
            self.remote.actions.append(f"state index {self.remote.state} created")
        except Exception as e:  # noqa: BLE001
            if "resource_already_exists" not in describe(e):
                raise EngineError(
                    f"{self.remote.url}: cannot create state index {self.remote.state}: "
                    f"{describe(e)}"
                ) from None

    def _wait_healthy(self) -> None:
        kw: dict[str, Any] = {
            "index": f"{self.remote.name},{self.remote.clusters}",
            "wait_for_status": "yellow",
            "timeout": self.remote.index_setup.health_timeout,
        }
        if self.remote.product == "opensearch":
            kw["request_timeout"] = self.remote.connection.request_timeout + 30
        health = self.remote.retry.call("cluster health", self.remote.client.cluster.health, **kw)
        if health.get("status") not in ("yellow", "green"):
            raise EngineError(
                f"{self.remote.location}: cluster health is {health.get('status')} after "
                f"{self.remote.index_setup.health_timeout}; the index cannot be written (check "
                "shards "
                "and disk)"
            )

    def _read_meta(self) -> dict[str, Any]:
        """``_meta.neardup`` of the documents index (a pointer; older indices: the settings)."""
        return dict((self.remote.mappings().get("_meta") or {}).get("neardup") or {})

    def _read_settings(self) -> dict[str, Any]:
        """The index's settings: the settings document the ``_meta`` pointer names (indices of
        older versions kept them in ``_meta`` itself)."""
        pointer = self._read_meta()
        if "config" in pointer or (
            pointer.get("settings") and pointer.get("layout") != templates.LAYOUT_VERSION
        ):
            raise EngineError(
                f"{self.remote.location} was built by an older neardup (its fields at the top "
                "level); "
                "build a new index with this version, or adopt the documents in place with "
                "'neardup attach'"
            )
        if not pointer.get("settings"):
            raise EngineError(
                f"{self.remote.location} exists but is not a neardup index (no _meta.neardup in "
                "its "
                "mapping); to use an existing index, adopt it with 'neardup attach'"
            )
        return self._read_settings_doc()

    def _read_settings_doc(self) -> dict[str, Any]:
        try:
            r = self.remote.retry.call(
                "read settings",
                self.remote.client.get,
                index=self.remote.state,
                id=templates.SETTINGS_ID,
                ok_status=(404,),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) != 404:
                raise
            r = {}
        data = (r.get("_source") or {}).get("data") if r.get("found") else None
        if not data or "config" not in data:
            raise EngineError(
                f"{self.remote.location}: its settings document "
                f"{self.remote.state}/{templates.SETTINGS_ID} is missing; run 'neardup init' on it "
                "again"
            )
        return dict(data)
