"""The HTTP engine: Elasticsearch 8/9 and OpenSearch 2/3 through their official clients.

One module a job: :mod:`.options` (the engine's settings, a record a concern), :mod:`.dsl`
(the request bodies, as pure functions), :mod:`.answers` (response bodies parsed into
records), :mod:`.calls` (one pager, one bulk streamer), :mod:`.lease` (the write lease that
serializes writers), :mod:`.key_match` (candidate queries answered in memory by the engine
query's rule) and :mod:`.engine` (:class:`ElasticEngine`). Clients, credentials and TLS are
:mod:`neardup.engines.transport`'s, shared with the dashboards' installer.
"""

from __future__ import annotations

from .engine import ElasticEngine

__all__ = ["ElasticEngine"]
