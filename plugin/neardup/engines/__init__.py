"""Engines: where signed documents live. ``open_engine`` picks one from a target string.

* a path (default ``neardup.db``) -> :class:`~neardup.engines.embedded.EmbeddedEngine`
* ``http(s)://host:port`` (or ``NEARDUP_URL``) -> :class:`~neardup.engines.elastic.ElasticEngine`

``Engine`` and ``EngineError`` (:mod:`neardup.engines.base`, which imports numpy and the
config) load when first named (PEP 562), so the command line reads :data:`DEFAULT_DB` for
its options without them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Engine, EngineError

DEFAULT_DB = "neardup.db"


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def open_engine(target: str | None = None, **options: Any) -> Engine:
    """An unopened engine for ``target`` (a SQLite path or an Elasticsearch/OpenSearch URL)."""
    target = target or os.environ.get("NEARDUP_URL") or DEFAULT_DB
    if is_url(target):
        from .elastic import ElasticEngine

        return ElasticEngine.from_options(target, **options)
    from .embedded import EmbeddedEngine

    return EmbeddedEngine(target, **options)


def __getattr__(name: str) -> Any:
    if name in ("Engine", "EngineError"):
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Engine", "EngineError", "open_engine", "is_url", "DEFAULT_DB"]
