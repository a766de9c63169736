"""Shingle hashes made again from a stored text equal those signing made
(:meth:`neardup.signer.Signer.shingle_sets`), so an engine that keeps the text alone still
verifies exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neardup import Config, Document
from neardup.signer import Signer

ROOT = Path(__file__).resolve().parent.parent
FILES = (
    ROOT / "examples" / "sample.jsonl",
    ROOT / "tests" / "data" / "languages_sample.jsonl",
    ROOT / "tests" / "data" / "fa_zwnj_sample.jsonl",
)


def _docs(with_lang: bool) -> list[Document]:
    out = []
    for path in FILES:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            r = json.loads(line)
            lang = r.get("lang") if with_lang else None
            out.append(Document(f"{path.stem}-{i}", r["text"], lang=lang))
    out += [
        Document("short", "two words"),
        Document("wordless", "!!! ..."),
        Document("stop", "the of and"),
    ]
    return out


@pytest.mark.parametrize("with_lang", [True, False])
@pytest.mark.parametrize(
    "config",
    [Config(), Config(shingle_size=3, stopwords=False), Config(stem="snowball")],
    ids=["default", "w3", "stemmed"],
)
def test_shingle_sets_equal_the_signed_ones(config, with_lang):
    signer = Signer(config)
    docs = _docs(with_lang)
    signed = signer.sign_batch(docs)
    made = signer.shingle_sets(docs)
    assert len(made) == len(signed) == len(docs)
    for s, m in zip(signed, made, strict=True):
        assert m.dtype == np.uint64 and np.array_equal(s.shingles, m), s.id
    assert Signer(config).shingle_sets([]) == []
