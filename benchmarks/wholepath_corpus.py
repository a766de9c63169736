"""The corpora of the whole path (:mod:`benchmarks.wholepath`): the synthetic one, English and
Russian documents of about 550 words with edited copies (:func:`build_corpus`), and the shared
corpora's real documents as they are (:func:`build_real_corpus`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_PERSIAN = ["فارسی", "کتاب", "ایران"]  # a few Arabic-script characters in a handful of documents


def build_corpus(path: Path, n: int, seed: int = 13) -> dict[str, Any]:
    """``n`` English/Russian documents of about 550 words into ``path`` (JSONL)."""
    from . import corpora
    from .synth import Generator

    base = corpora.load("en") + corpora.load("ru")
    gen = Generator(base, seed=seed, dup_rate=0.3, langs=("en", "ru"), sentences=(40, 72))
    gen.count = len(
        gen.base
    )  # collages and their edited copies only (the corpus documents are short)
    words = edited = 0
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            s = next(gen)
            text = s.doc.text
            if i % 2000 == 1000:
                text += f" ({_PERSIAN[i % 3]})"
            words += len(text.split())
            edited += s.source >= 0
            f.write(json.dumps({"id": f"w{i:06d}", "text": text}, ensure_ascii=False) + "\n")
    return {
        "documents": n,
        "words_per_doc": round(words / max(1, n)),
        "edited_copies": edited,
        "bytes": path.stat().st_size,
    }


def build_real_corpus(path: Path) -> dict[str, Any]:
    """The documents of the shared corpora's en, ru and fa files, as they are, into ``path``
    (JSONL; organic near-duplicates and exact re-postings included)."""
    from . import corpora

    n = words = 0
    with path.open("w", encoding="utf-8") as f:
        for name in ("en", "ru", "fa"):
            for d in corpora.load(name):
                words += len(d.text.split())
                n += 1
                f.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    return {
        "documents": n,
        "words_per_doc": round(words / max(1, n)),
        "edited_copies": 0,
        "source": "shared corpora en, ru, fa",
        "bytes": path.stat().st_size,
    }
