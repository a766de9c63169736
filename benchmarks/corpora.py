"""The shared development corpora (``../shared/corpora`` beside the repository)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from neardup.signing.records import Document

#: name -> (file, language): long English licenses, Persian, Russian, English Reuters news.
CORPORA = {
    "en_licenses": ("en_licenses.jsonl", "en"),
    "fa": ("fa.jsonl", "fa"),
    "ru": ("ru.jsonl", "ru"),
    "en": ("en.jsonl", "en"),
}


def corpora_dir() -> Path:
    """``$NEARDUP_CORPORA``, else ``<repo>/../shared/corpora``."""
    env = os.environ.get("NEARDUP_CORPORA")
    d = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
    if not d.is_dir():
        raise FileNotFoundError(
            f"corpora folder {d} not found; set NEARDUP_CORPORA to the folder holding "
            "en.jsonl, fa.jsonl, ..."
        )
    return d


def load(name: str, limit: int | None = None) -> list[Document]:
    """Documents of one corpus (its own language set), in file order."""
    file, lang = CORPORA[name]
    path = corpora_dir() / file
    out = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if limit is not None and len(out) >= limit:
                break
            try:
                rec = json.loads(line)
                out.append(Document(rec["id"], rec["text"], lang=rec.get("lang") or lang))
            except (json.JSONDecodeError, KeyError) as e:
                raise ValueError(f"{path}:{n}: not a corpus record ({e})") from None
    return out


def load_all(limit_per_corpus: int | None = None) -> dict[str, list[Document]]:
    return {name: load(name, limit_per_corpus) for name in CORPORA}
