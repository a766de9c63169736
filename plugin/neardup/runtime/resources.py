"""The JSON definitions under ``mappings/`` and ``ingest_pipeline/`` at the top of the repo.

They are the single source of truth: the wheel ships them as ``neardup/_data/...``; a
source checkout reads them where they stand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_PACKAGED = Path(__file__).resolve().parents[1] / "_data"
_CHECKOUT = Path(__file__).resolve().parents[3]


def resource_dir(kind: str) -> Path:
    """``mappings`` or ``ingest_pipeline``: the installed copy, else the checkout's."""
    for base in (_PACKAGED, _CHECKOUT):
        d = base / kind
        if d.is_dir():
            return d
    raise FileNotFoundError(
        f"neardup resource folder {kind!r} not found in {_PACKAGED} or {_CHECKOUT}"
    )


def load_json(kind: str, name: str) -> Any:
    path = resource_dir(kind) / name
    with path.open(encoding="utf-8") as f:
        return json.load(f)
