"""Access to the shared development corpora: ``$NEARDUP_CORPORA``, else ../shared/corpora next
to the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The folder the neardup under test is imported from (for the PYTHONPATH of a child
#: process): the installed package (its compiled loops built by pip), or the checkout's
#: plugin/ in an editable install.
NEARDUP_PATH = Path(__import__("neardup").__file__).resolve().parents[1]
CORPORA = Path(os.environ.get("NEARDUP_CORPORA") or REPO.parent / "shared" / "corpora")
SAMPLE = REPO / "examples" / "sample.jsonl"
FA_ZWNJ_SAMPLE = Path(__file__).parent / "data" / "fa_zwnj_sample.jsonl"


def corpus(name: str, limit: int | None = None, max_words: int | None = None) -> list[dict]:
    """Records of ``name``.jsonl, skipping the test when the corpora are not there."""
    path = CORPORA / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if max_words is None or len(rec["text"].split()) <= max_words:
                out.append(rec)
            if limit is not None and len(out) >= limit:
                break
    return out
