"""neardup: near-duplicate document detection for Elasticsearch, OpenSearch and SQLite.

text -> canonical tokens -> shingles -> signatures -> engine -> candidates -> exact verification.

The names below are imported on first use (PEP 562), so a process that only signs (an
indexing worker) does not load the engines and the API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import IndexReport, Match, NearDup, Pair
    from .config import Config, ConfigError, ConfigMismatch
    from .errors import DocumentNotFound, EngineError, InvalidInput, NeardupError
    from .comparison.explain import Comparison
    from .signing.signer import Signer
    from .signing.records import Document, Signed

_WHERE = {
    "NearDup": "api",
    "Comparison": "comparison.explain",
    "IndexReport": "api",
    "Match": "api",
    "Pair": "api",
    "Config": "config",
    "ConfigError": "config",
    "ConfigMismatch": "config",
    "Document": "signing.records",
    "Signed": "signing.records",
    "Signer": "signing.signer",
    "NeardupError": "errors",
    "InvalidInput": "errors",
    "EngineError": "errors",
    "DocumentNotFound": "errors",
}

__all__ = [
    "NearDup",
    "Config",
    "ConfigError",
    "ConfigMismatch",
    "Document",
    "Signed",
    "Signer",
    "Match",
    "Pair",
    "Comparison",
    "IndexReport",
    "NeardupError",
    "InvalidInput",
    "EngineError",
    "DocumentNotFound",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
