"""Shingle hashes made again from a stored text equal those signing made
(:meth:`neardup.signing.signer.Signer.shingle_sets`), so an engine that keeps the text alone still
verifies exactly."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from neardup import Config, Document
from neardup.signing.signer import Signer
from neardup.engines.embedded import schema

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
    [
        Config(),
        Config(shingle_size=3, stopwords=False),
        pytest.param(
            Config(stem="snowball"),
            marks=pytest.mark.skipif(
                find_spec("hazm") is None, reason="Persian stems need hazm (neardup[hazm])"
            ),
        ),
    ],
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
    from neardup.engines.stored_shingles import MIN_MADE, StoredShingles, column, is_marker

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
    reader = StoredShingles(config)
    reader.batch = 7  # texts made again a few at a time: the same sets
    rows = [
        (i, b, s.n_shingles, s.doc.text) for i, (b, s) in enumerate(zip(blobs, signed, strict=True))
    ]
    for s, got in zip(signed, reader.sets(rows), strict=True):
        assert np.array_equal(got, s.shingles), s.id
    # a marker read again comes from the cache, not from the text
    i = markers.index(True)
    cached = reader.sets([(rows[i][0], rows[i][1], rows[i][2], "")])
    assert np.array_equal(cached[0], signed[i].shingles)
    with pytest.raises(ValueError, match="were stored"):
        i = markers.index(True)
        StoredShingles(config).sets([("x", blobs[i], signed[i].n_shingles, "other words")])


def test_the_cache_keeps_the_most_recently_used_within_its_bytes():
    from neardup.engines.stored_shingles import ShingleCache

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


def _open(path: Path, format_: str | None = None):
    """A new embedded index; ``format_``: its file marked as that format before any write
    of documents (as a file of that format made by the neardup that wrote it)."""
    import sqlite3

    from neardup import NearDup

    NearDup.open(str(path)).close()
    if format_ is not None:
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value=? WHERE key='format'", (format_,))
    return NearDup.open(str(path))


def _column_lengths(path: Path) -> list[tuple[int, int]]:
    import sqlite3

    with sqlite3.connect(path) as db:
        return db.execute("SELECT length(shingles), n_shingles FROM docs").fetchall()


def test_a_new_file_keeps_markers_and_reads_the_signed_shingles(tmp_path):
    docs = _docs(True) + [
        Document(f"auto-{d.id}", d.text, lang=None) for d in _docs(False) if d.text
    ]
    with _open(tmp_path / "new.db") as nd:
        nd.index(docs, batch_size=50, progress=None)
        nd.engine.refresh()
        signed = {s.id: s.shingles for s in Signer(nd.config).sign_batch(docs)}
        # read back in a fresh process state: a new engine, no cache
    with _open(tmp_path / "new.db") as nd:
        stored = nd.engine.get(list(signed))
        assert len(stored) == len(signed)
        for i, d in stored.items():
            assert np.array_equal(d.shingles, signed[i]), i
        scanned = {d.id: d.shingles for d in nd.engine.scan(batch_size=37)}
        assert all(np.array_equal(scanned[i], signed[i]) for i in signed)
    lengths = _column_lengths(tmp_path / "new.db")
    markers = [n for length, n in lengths if length != 8 * n]
    assert markers and all(n >= 16 for n in markers)


def test_a_file_of_the_previous_format_keeps_storing_hashes(tmp_path):
    docs = _docs(True)
    with _open(tmp_path / "old.db", "neardup-sqlite/2") as nd:
        nd.index(docs, batch_size=50, progress=None)
        nd.engine.refresh()
    assert all(length == 8 * n for length, n in _column_lengths(tmp_path / "old.db"))


def test_markers_leave_tags_matches_and_containment_unchanged(tmp_path):
    base = _docs(True)
    edited = [
        Document(
            f"{d.id}-copy", d.text.replace(" ", "  ", 3) + " extra words at the end", lang=d.lang
        )
        for d in base[::7]
    ]
    docs = base + edited
    out = {}
    for name, fmt in (("new", None), ("old", "neardup-sqlite/2")):
        with _open(tmp_path / f"{name}.db", fmt) as nd:
            nd.index(docs, batch_size=40, progress=None)
            tags = {d.id: d.tags for d in nd.engine.get([d.id for d in docs], keys=False).values()}
            q = base[7].text
            found = [(m.id, m.resemblance) for m in nd.query(q)]
            contained = [
                (m.id, m.containment)
                for m in nd.query(q[: len(q) // 2], mode="containment", threshold=0.5)
            ]
            nd.delete([edited[1].id])
            nd.index(
                [Document(base[14].id, base[14].text + " changed", lang=base[14].lang)],
                progress=None,
            )
            after = {d.id: d.tags for d in nd.engine.scan()}
            out[name] = (tags, found, contained, after)
    assert any(t.is_duplicate for t in out["new"][0].values())
    assert out["new"][1] and out["new"][2]
    assert out["new"] == out["old"]


def test_the_marker_keeps_the_language_a_document_was_given():
    from neardup.engines.stored_shingles import StoredShingles, column

    # English words given as Russian: Russian's shingle size applies, detection would not
    config = Config(shingle_size_by_lang=(("ru", 3),))
    text = " ".join(f"word{i} river stone" for i in range(12))
    s = Signer(config).sign(Document("x", text, lang="ru"))
    assert s.shingles.size != Signer(config).sign(Document("x", text)).shingles.size
    blob = column(s)
    assert blob == b"Tru"
    got = StoredShingles(config).sets([("k", blob, s.n_shingles, text)])[0]
    assert np.array_equal(got, s.shingles)


def test_a_file_of_format_3_keeps_every_posting_in_postings(tmp_path):
    """A ``/3`` file (made before ``recent_postings``) keeps its layout, so the neardup that
    made it still finds every candidate in it; a new file stages postings in the new table."""
    import sqlite3

    docs = _docs(False)
    counts = {}
    for name, fmt in (("new", None), ("v3", "neardup-sqlite/3")):
        with _open(tmp_path / f"{name}.db", fmt) as nd:
            nd.index(docs, batch_size=50, progress=None)
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            counts[name] = [
                db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("postings", "recent_postings")
            ]
            format_ = db.execute("SELECT value FROM meta WHERE key='format'").fetchone()[0]
        assert format_ == (fmt or schema.FORMAT)
    assert counts["v3"][0] == sum(counts["new"]) and counts["v3"][1] == 0
    assert counts["new"][1] > 0
    markers = [n for length, n in _column_lengths(tmp_path / "v3.db") if length != 8 * n]
    assert markers


def test_one_signer_makes_the_shingles_of_a_process(engine_target, count_signers):
    """The index's signer is handed to the engine (Engine.use_signer): reading markers back
    in a process that signs canonicalizes with that signer, on every engine, and makes no
    second one."""
    from neardup import NearDup

    docs = [Document(d.id, d.text, lang=d.lang) for d in _docs(True) if d.text][:40]
    target, opts = engine_target
    with NearDup.open(target, Config(), **opts) as nd:
        nd.index(docs, batch_size=20, progress=None)
    made = count_signers()
    with NearDup.open(target, **opts) as nd:  # a new process state: nothing cached
        found = nd.query(docs[3].text)
        stored = nd.engine.get([d.id for d in docs])
    assert found and found[0].id == docs[3].id
    assert len(stored) == len(docs)
    assert made == [nd.signer]


def test_a_query_verifies_its_candidates_from_the_search_hits(osmem_clone, tmp_path, monkeypatch):
    """On the HTTP engine a query's candidate search brings each candidate's text and
    title: shingles stored as a marker are made again from the hit, so in a process that
    has cached nothing a query reads nothing by id (neither texts nor titles), and its
    matches, titles included, equal the embedded engine's."""
    from neardup import NearDup

    from .conftest import http_pipeline

    docs = [
        Document(d.id, d.text, lang=d.lang, title=f"title of {d.id}" if i % 2 else None)
        for i, d in enumerate(x for x in _docs(True) if x.text)
    ][:40]
    queries = [d.text.replace(" ", "  ", 2) + " and a few words more" for d in docs[::5]]

    def matches(nd) -> list[list[tuple]]:
        return [
            [(m.id, m.resemblance, m.intersection, m.title) for m in nd.query(q)] for q in queries
        ]

    with NearDup.open(str(tmp_path / "e.db"), Config()) as nd:
        nd.index(docs, batch_size=20, progress=None)
        embedded = matches(nd)
    opts = {"index": "verified", "pipeline": http_pipeline()}
    with NearDup.open(osmem_clone.url, Config(), **opts) as nd:
        nd.index(docs, batch_size=20, progress=None)
    with NearDup.open(osmem_clone.url, **opts) as nd:  # a new process state: nothing cached
        asked: list[list[str]] = []
        mget = nd.engine.remote.client.mget

        def recorded(**kw):
            asked.append([d["_id"] for d in kw["body"]["docs"]])
            return mget(**kw)

        monkeypatch.setattr(nd.engine.remote.client, "mget", recorded)
        http = matches(nd)
    titled = {m[3] is None for found in embedded for m in found}
    assert all(embedded) and titled == {True, False}
    assert http == embedded and asked == []
