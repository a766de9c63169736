"""Adopting a user's existing index in place (``neardup attach``): the name must resolve to
one open index, everything the adoption needs is checked before anything changes (``_source``,
blocks, the field limit, the side indices), then the state and clusters indices are made and
one mapping update adds the ``neardup`` object beside the user's fields; the ingest pipeline
drops stale ``neardup`` fields of documents other clients change. The documents without
neardup's fields are then read to be signed.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

from ...config import Config, is_language_code
from ...signing.records import Document
from ..base import EngineError
from ..transport import status_of
from . import dsl
from . import templates
from .layout import Layout, ROOT
from .attach_checks import (
    count_fields,
    flat_settings,
    settings_problem,
    source_problem,
    target_problem,
)
from .hits import field_text, json_kind, source_field, source_text
from .index import Index
from .setup import SetUp


class Attach:
    """The adoption of ``remote`` (a user's index), through the side indices of ``setup``."""

    def __init__(self, remote: Index, setup: SetUp):
        self.remote = remote
        self.setup = setup

    def check_target(self) -> None:
        """The name ``attach`` was given resolves to one open index (or an alias over one):
        an alias over several indices, a data stream and a closed index are refused
        (:func:`~neardup.engines.elastic.attach_checks.target_problem`) before anything changes."""
        try:
            resolved = self.remote.retry.call(
                "resolve index",
                self.remote.client.indices.resolve_index,
                name=self.remote.name,
                ok_status=(400, 404, 405),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) not in (400, 404, 405):
                raise
            resolved = None  # (an engine without _resolve/index: the mapping tells the rest)
        if resolved is not None:
            problem = target_problem(self.remote.location, resolved)
            if problem:
                raise EngineError(problem)
        elif not self.remote.exists(self.remote.name):
            raise EngineError(f"{self.remote.location}: no such index to attach")

    def preflight(self, mappings: dict[str, Any], layout: Layout, config: Config) -> None:
        """Everything ``attach`` needs, checked before it changes anything: ``_source``, the
        index's blocks and field limit, the clusters and state indices (absent, or
        neardup's own), and the privileges of bulk requests
        (:meth:`~.setup.SetUp.check_bulk`) and refreshes (a refresh of the index)."""
        own = templates.neardup_mapping(config.signatures)
        problem = source_problem(self.remote.location, mappings, layout.text or "", own)
        if problem:
            raise EngineError(problem)
        got = self.remote.retry.call(
            "get settings",
            self.remote.client.indices.get_settings,
            index=self.remote.name,
            include_defaults=True,
            flat_settings=True,
        )
        for answer in got.values():
            flat = {
                **flat_settings(answer.get("defaults") or {}),
                **flat_settings(answer.get("settings") or {}),
            }
            problem = settings_problem(
                self.remote.location,
                self.remote.name,
                flat,
                adds=count_fields({ROOT: templates.neardup_mapping(config.signatures)}),
                has=count_fields(mappings.get("properties") or {}),
            )
            if problem:
                raise EngineError(problem)
        self.setup.check_own(self.remote.clusters, "clusters")
        if self.setup.check_own(self.remote.state, "state") is None:
            self.setup.check_bulk(self.remote.state)
        self.remote.retry.call(
            "refresh", self.remote.client.indices.refresh, index=self.remote.name
        )

    def resume(self, layout: Layout) -> None:
        """Attach again an index attached (or built) before, now open: its stored layout must
        agree with the fields asked for; fields added to the mapping since, and the pipeline,
        installed."""
        given = {
            k: v
            for k, v in layout.to_dict().items()
            if v is not None and k not in ("adopted", "languages")
        }
        wanted = Layout.from_dict({**self.remote.layout.to_dict(), **given})
        if self.remote.layout != wanted:
            stored = (
                self.remote.layout.describe()
                if self.remote.layout.adopted
                else "neardup's own fields (built by 'neardup index')"
            )
            raise EngineError(
                f"{self.remote.location} is already attached with {stored}, not "
                f"{wanted.describe()}: "
                "run attach without the field options to go on with the stored ones"
            )
        self.remote.actions.append(
            f"index {self.remote.name} already attached ({self.remote.layout.describe()}) - "
            "resuming"
        )
        wanted = {ROOT: templates.neardup_mapping(self.remote.config.signatures)}
        added = templates.fields_added(wanted, self.remote.mappings().get("properties") or {})
        if added:  # fields added since (those mapped before keep their mapping)
            self.remote.retry.call(
                "put mapping",
                self.remote.client.indices.put_mapping,
                index=self.remote.name,
                body={"properties": added},
            )
        self.pipeline()

    def adopt(self, layout: Layout, config: Config, user_meta: dict[str, Any]) -> None:
        """Adopt an index of the user's: the state index with the settings document and the
        clusters index made, then neardup's fields added to its mapping beside the user's
        (``user_meta`` kept), then the pipeline set. The mapping, the one change to the
        user's index that cannot be undone, comes after the side indices: when it is refused
        they are taken away again, so a refusal leaves no trace."""
        self.remote.layout = layout
        self.remote.opened = config
        self.remote.meta = templates.index_meta(self.remote.opened, layout=layout)
        made: list[str] = []  # side indices made here, removed again if the mapping is refused
        try:
            if self.setup.check_own(self.remote.state, "state") is None:
                made.append(self.remote.state)
            self.setup.ensure_state_index()
            self.setup.create_settings()
            if self.setup.check_own(self.remote.clusters, "clusters") is None:
                made.append(self.remote.clusters)
                self.remote.retry.call(
                    "create clusters index",
                    self.remote.client.indices.create,
                    index=self.remote.clusters,
                    body=templates.clusters_template(self.remote.name)["template"],
                )
                self.remote.actions.append(f"clusters index {self.remote.clusters} created")
            body = templates.attach_mapping(
                config.signatures,
                templates.meta_pointer(self.remote.name, self.remote.meta),
                user_meta,
            )
            self.remote.retry.call(
                "put mapping",
                self.remote.client.indices.put_mapping,
                index=self.remote.name,
                body=body,
            )
        except BaseException:
            for index in made:
                with contextlib.suppress(Exception):  # the first cause is the one raised
                    self.remote.retry.call(
                        "delete index",
                        self.remote.client.indices.delete,
                        index=index,
                        ok_status=(404,),
                    )
            raise
        self.remote.actions.append(
            f"mapping of {self.remote.name}: neardup.* added (user fields unchanged)"
        )
        self.pipeline()

    def pipeline(self) -> None:
        """The adopted index's ``final_pipeline`` (:func:`~.templates.attached_pipeline_body`):
        a write by another client that changes the signed text drops the stale ``neardup``
        fields. Left out with ``pipeline=False``, or when the index has a final pipeline of its
        own."""
        if self.remote.index_setup.pipeline is False:
            return
        pipe = templates.pipeline_id(self.remote.name)
        got = self.remote.retry.call(
            "get settings", self.remote.client.indices.get_settings, index=self.remote.name
        )
        current = (
            next(iter(got.values()), {}).get("settings", {}).get("index", {}) if got else {}
        ).get("final_pipeline")
        if current not in (None, "_none", pipe):
            self.remote.actions.append(
                f"{self.remote.name} has its own final_pipeline {current}: documents other clients "
                "change keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        try:
            self.remote.retry.call(
                "put ingest pipeline",
                self.remote.client.ingest.put_pipeline,
                id=pipe,
                body=templates.attached_pipeline_body(self.remote.layout),
            )
        except EngineError as e:
            if self.remote.index_setup.pipeline:  # asked for: its failure is the command's
                raise
            self.remote.actions.append(
                f"no ingest pipeline on {self.remote.name} ({e}): documents other clients change "
                "keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        if current != pipe:
            self.remote.retry.call(
                "put settings",
                self.remote.client.indices.put_settings,
                index=self.remote.name,
                body=templates.final_pipeline_settings(pipe),
            )
            self.remote.actions.append(
                f"final_pipeline of {self.remote.name} set to {pipe}: a document whose text "
                "another "
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
        lay = self.remote.layout
        for h in self.remote.pager().snapshot(
            self.remote.name,
            functools.partial(dsl.unsigned_body, batch_size, layout=lay),
            batch_size,
        ):
            src_id, src = h["_id"], h["_source"]
            raw = source_field(src, lay.text)
            text = field_text(raw)
            if not text:
                if on_textless is not None:
                    on_textless(src_id, json_kind(raw))
                continue
            lang = source_text(src, lay.lang) if lay.lang else None
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
                "bool": {
                    "must_not": [dsl.signed_query(), {"exists": {"field": self.remote.layout.text}}]
                }
            }
        }
        return int(
            self.remote.retry.call(
                "count", self.remote.client.count, index=self.remote.name, body=body
            )["count"]
        )
