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
    """The adoption of ``ix`` (a user's index), through the side indices of ``setup``."""

    def __init__(self, ix: Index, setup: SetUp):
        self.ix = ix
        self.setup = setup

    def check_target(self) -> None:
        """The name ``attach`` was given resolves to one open index (or an alias over one):
        an alias over several indices, a data stream and a closed index are refused
        (:func:`~neardup.engines.elastic.attach_checks.target_problem`) before anything changes."""
        try:
            resolved = self.ix.retry.call(
                "resolve index",
                self.ix.client.indices.resolve_index,
                name=self.ix.name,
                ok_status=(400, 404, 405),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) not in (400, 404, 405):
                raise
            resolved = None  # (an engine without _resolve/index: the mapping tells the rest)
        if resolved is not None:
            problem = target_problem(self.ix.location, resolved)
            if problem:
                raise EngineError(problem)
        elif not self.ix.exists(self.ix.name):
            raise EngineError(f"{self.ix.location}: no such index to attach")

    def preflight(self, mappings: dict[str, Any], layout: Layout, config: Config) -> None:
        """Everything ``attach`` needs, checked before it changes anything: ``_source``, the
        index's blocks and field limit, the clusters and state indices (absent, or
        neardup's own), and the privileges of bulk requests
        (:meth:`~.setup.SetUp.check_bulk`) and refreshes (a refresh of the index)."""
        problem = source_problem(self.ix.location, mappings, layout.text or "")
        if problem:
            raise EngineError(problem)
        got = self.ix.retry.call(
            "get settings",
            self.ix.client.indices.get_settings,
            index=self.ix.name,
            include_defaults=True,
            flat_settings=True,
        )
        for answer in got.values():
            flat = {
                **flat_settings(answer.get("defaults") or {}),
                **flat_settings(answer.get("settings") or {}),
            }
            problem = settings_problem(
                self.ix.location,
                self.ix.name,
                flat,
                adds=count_fields({ROOT: templates.neardup_mapping(config.signatures)}),
                has=count_fields(mappings.get("properties") or {}),
            )
            if problem:
                raise EngineError(problem)
        self.setup.check_own(self.ix.clusters, "clusters")
        if self.setup.check_own(self.ix.state, "state") is None:
            self.setup.check_bulk(self.ix.state)
        self.ix.retry.call("refresh", self.ix.client.indices.refresh, index=self.ix.name)

    def resume(self, layout: Layout) -> None:
        """Attach again an index attached (or built) before, now open: its stored layout must
        agree with the fields asked for; fields added to the mapping since, and the pipeline,
        installed."""
        given = {
            k: v
            for k, v in layout.to_dict().items()
            if v is not None and k not in ("adopted", "languages")
        }
        wanted = Layout.from_dict({**self.ix.layout.to_dict(), **given})
        if self.ix.layout != wanted:
            stored = (
                self.ix.layout.describe()
                if self.ix.layout.adopted
                else "neardup's own fields (built by 'neardup index')"
            )
            raise EngineError(
                f"{self.ix.location} is already attached with {stored}, not {wanted.describe()}: "
                "run attach without the field options to go on with the stored ones"
            )
        self.ix.actions.append(
            f"index {self.ix.name} already attached ({self.ix.layout.describe()}) - resuming"
        )
        wanted = {ROOT: templates.neardup_mapping(self.ix.config.signatures)}
        added = templates.fields_added(wanted, self.ix.mappings().get("properties") or {})
        if added:  # fields added since (those mapped before keep their mapping)
            self.ix.retry.call(
                "put mapping",
                self.ix.client.indices.put_mapping,
                index=self.ix.name,
                body={"properties": added},
            )
        self.pipeline()

    def adopt(self, layout: Layout, config: Config, user_meta: dict[str, Any]) -> None:
        """Adopt an index of the user's: the state index with the settings document and the
        clusters index made, then neardup's fields added to its mapping beside the user's
        (``user_meta`` kept), then the pipeline set. The mapping, the one change to the
        user's index that cannot be undone, comes after the side indices: when it is refused
        they are taken away again, so a refusal leaves no trace."""
        self.ix.layout = layout
        self.ix.opened = config
        self.ix.meta = templates.index_meta(self.ix.opened, layout=layout)
        made: list[str] = []  # side indices made here, removed again if the mapping is refused
        try:
            if self.setup.check_own(self.ix.state, "state") is None:
                made.append(self.ix.state)
            self.setup.ensure_state_index()
            self.setup.create_settings()
            if self.setup.check_own(self.ix.clusters, "clusters") is None:
                made.append(self.ix.clusters)
                self.ix.retry.call(
                    "create clusters index",
                    self.ix.client.indices.create,
                    index=self.ix.clusters,
                    body=templates.clusters_template(self.ix.name)["template"],
                )
                self.ix.actions.append(f"clusters index {self.ix.clusters} created")
            body = templates.attach_mapping(
                config.signatures, templates.meta_pointer(self.ix.name, self.ix.meta), user_meta
            )
            self.ix.retry.call(
                "put mapping", self.ix.client.indices.put_mapping, index=self.ix.name, body=body
            )
        except BaseException:
            for index in made:
                with contextlib.suppress(Exception):  # the first cause is the one raised
                    self.ix.retry.call(
                        "delete index", self.ix.client.indices.delete, index=index, ok_status=(404,)
                    )
            raise
        self.ix.actions.append(
            f"mapping of {self.ix.name}: neardup.* added (user fields unchanged)"
        )
        self.pipeline()

    def pipeline(self) -> None:
        """The adopted index's ``final_pipeline`` (:func:`~.templates.attached_pipeline_body`):
        a write by another client that changes the signed text drops the stale ``neardup``
        fields. Left out with ``pipeline=False``, or when the index has a final pipeline of its
        own."""
        if self.ix.index_setup.pipeline is False:
            return
        pipe = templates.pipeline_id(self.ix.name)
        got = self.ix.retry.call(
            "get settings", self.ix.client.indices.get_settings, index=self.ix.name
        )
        current = (
            next(iter(got.values()), {}).get("settings", {}).get("index", {}) if got else {}
        ).get("final_pipeline")
        if current not in (None, "_none", pipe):
            self.ix.actions.append(
                f"{self.ix.name} has its own final_pipeline {current}: documents other clients "
                "change keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        try:
            self.ix.retry.call(
                "put ingest pipeline",
                self.ix.client.ingest.put_pipeline,
                id=pipe,
                body=templates.attached_pipeline_body(self.ix.layout),
            )
        except EngineError as e:
            if self.ix.index_setup.pipeline:  # asked for: its failure is the command's
                raise
            self.ix.actions.append(
                f"no ingest pipeline on {self.ix.name} ({e}): documents other clients change "
                "keep their old neardup fields (re-sign them with neardup index)"
            )
            return
        if current != pipe:
            self.ix.retry.call(
                "put settings",
                self.ix.client.indices.put_settings,
                index=self.ix.name,
                body=templates.final_pipeline_settings(pipe),
            )
            self.ix.actions.append(
                f"final_pipeline of {self.ix.name} set to {pipe}: a document whose text another "
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
        lay = self.ix.layout
        for h in self.ix.pager().snapshot(
            self.ix.name, functools.partial(dsl.unsigned_body, batch_size, layout=lay), batch_size
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
                    "must_not": [dsl.signed_query(), {"exists": {"field": self.ix.layout.text}}]
                }
            }
        }
        return int(
            self.ix.retry.call("count", self.ix.client.count, index=self.ix.name, body=body)[
                "count"
            ]
        )
