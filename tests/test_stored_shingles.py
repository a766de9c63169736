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


def test_a_signer_without_the_extended_family_makes_the_same_shingles():
    config = Config(signatures=("exact", "minhash", "super", "text_stats"))
    docs = _docs(True)
    signed = Signer(config).sign_batch(docs)
    lean = Signer(config, extended=False)
    assert not lean.extra_signatures
    for s, m in zip(signed, lean.shingle_sets(docs), strict=True):
        assert np.array_equal(s.shingles, m), s.id


def test_the_column_holds_a_marker_where_the_text_makes_the_shingles():
    from neardup.engines.shingle_column import MIN_MADE, ShingleColumn, column, is_marker

    config = Config()
    docs = _docs(True) + _docs(False)[:10]
    docs = [Document(f"{d.id}-{i}", d.text, lang=d.lang) for i, d in enumerate(docs)]
    signed = Signer(config).sign_batch(docs)
    given = Document("tok", "ignored", tokens=[f"t{i}" for i in range(40)])
    signed.append(Signer(config).sign(given))
    blobs = [column(s) for s in signed]
    markers = [is_marker(b, s.n_shingles) for b, s in zip(blobs, signed, strict=True)]
    assert any(markers) and not all(markers)
    assert not markers[-1], "a document that brought its tokens keeps its hashes"
    for s, m in zip(signed, markers, strict=True):
        assert m == (s.n_shingles >= MIN_MADE and s.doc.tokens is None)
    reader = ShingleColumn(config)
    rows = [
        (i, b, s.n_shingles, s.doc.text) for i, (b, s) in enumerate(zip(blobs, signed, strict=True))
    ]
    for s, got in zip(signed, reader.sets(rows), strict=True):
        assert np.array_equal(got, s.shingles), s.id
    # a marker read again comes from the cache, not from the text
    cached = reader.sets([(rows[0][0], rows[0][1], rows[0][2], "")]) if markers[0] else None
    if cached is not None:
        assert np.array_equal(cached[0], signed[0].shingles)
    with pytest.raises(ValueError, match="were stored"):
        i = markers.index(True)
        ShingleColumn(config).sets([("x", blobs[i], signed[i].n_shingles, "other words")])


def test_the_cache_keeps_the_most_recently_used_within_its_bytes():
    from neardup.engines.shingle_column import ShingleCache

    cache = ShingleCache(max_bytes=3 * 80)
    sets = {k: np.arange(10, dtype=np.uint64) + k for k in range(5)}
    for k in (0, 1, 2):
        cache.put(k, sets[k])
    assert cache.get(0) is sets[0]  # 0 is now the most recent
    cache.put(3, sets[3])  # drops 1, the least recently used
    assert cache.get(1) is None and cache.get(0) is sets[0] and cache.get(3) is sets[3]
    assert len(cache) == 3 and cache.bytes == 240
    cache.put(4, np.zeros(100, dtype=np.uint64))  # larger than the whole cache: not kept
    assert cache.get(4) is None and len(cache) == 3
