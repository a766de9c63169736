"""The HTTP engine: Elasticsearch 8/9 and OpenSearch 2/3 through their official clients.

One module a job. Set-up apart from reads and writes, each part holding the
:class:`~.index.Index` it works on:

* :mod:`.index` (the index's names, the client that reaches it, its stored settings),
  :mod:`.setup` (templates, pipeline, side indices, the settings document) and
  :mod:`.attach` (adopting a user's index in place, refused first for what
  :mod:`.attach_checks` finds);
* :mod:`.sessions` (the write lease, arrival numbers, refreshes), :mod:`.writes`
  (documents, tags, deletes, clusters), :mod:`.candidates` (candidate queries, collisions)
  and :mod:`.reads` (documents, scans, counts, full-text search, clusters);
* :mod:`.engine` (:class:`ElasticEngine`, made of those parts).

Beside them: :mod:`.options` (the engine's settings, a record a concern), :mod:`.layout`
(where a document's fields are), :mod:`.templates` (the names, templates, pipeline and
settings document of an index) and :mod:`.dsl` (the request bodies of reads and writes),
both pure functions, :mod:`.hits` (response bodies parsed into records),
:mod:`.pager_and_bulk` (one pager, one bulk streamer), :mod:`.lease` (the lease document) and
:mod:`.key_match` (candidate queries answered in memory by the engine query's rule).
Clients, credentials and TLS are :mod:`neardup.engines.transport`'s, shared with the
dashboards' installer.
"""

from __future__ import annotations

from .engine import ElasticEngine

__all__ = ["ElasticEngine"]
