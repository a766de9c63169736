"""A document rewritten keeps every neardup field, and is found as before (docs/engines.md,
"What a document keeps when it is rewritten"): its tags rewritten by a partial update
(``retag``), its text changed and changed back by ``neardup index`` (the whole document sent
again), and, over HTTP, the whole document read and written back by a user. The engine
indexes a partial update again from ``_source``: a field kept out of it would be lost from
the index there, and the document no longer found by its keys. The shingle hashes are the one
field stored as something else (a marker, made again from the text), so verification after
the rewrite proves they survive it. Run on every engine (``engine_target``; real OpenSearch
with NEARDUP_TEST_ENGINE)."""

from __future__ import annotations

from typing import Any

import pytest

from neardup import Document, NearDup
from neardup.engines.elastic import ElasticEngine
from neardup.engines.elastic.dsl import tags_source
from neardup.engines.elastic.layout import ROOT

from .conftest import http_pipeline
from .test_behaviour import CONFIG, sample_docs

#: the tag fields inside ``neardup`` (what a tag rewrite changes)
TAGS = set(tags_source(None))


def _signature(nd: NearDup, ids: list[str]) -> dict[str, tuple]:
    """Every stored field of the documents but their tags, as the engine reads them back
    (keys, and the shingles made again from the text where a marker holds them)."""
    got = nd.engine.get(ids, text=True)
    return {
        i: (
            d.lang,
            d.exact,
            d.simhash,
            d.n_shingles,
            d.too_short,
            d.shingles.tolist(),
            {f: v.tolist() for f, v in d.keys.items()},
            d.text,
            d.seq,
        )
        for i, d in got.items()
    }


def _sources(nd: NearDup, ids: list[str]) -> dict[str, dict[str, Any]] | None:
    """The ``neardup`` object of each document's ``_source`` but its tags (HTTP engines;
    None on the embedded engine)."""
    if not isinstance(nd.engine, ElasticEngine):
        return None
    remote = nd.engine.remote
    out = {}
    for i in ids:
        src = remote.client.get(index=remote.name, id=i)["_source"]
        out[i] = {k: v for k, v in src[ROOT].items() if k not in TAGS}
    return out


def _found(nd: NearDup, docs: list[Document]) -> dict[str, list]:
    """What a query of each document's text finds, in both modes: candidates by the keys the
    engine indexed, verified on shingles."""
    return {
        f"{d.id} {mode}": [(m.id, round(m.resemblance, 9)) for m in nd.query(d.text, mode=mode)]
        for d in docs
        for mode in ("resemblance", "containment")
    }


def _near_copy_is_found(nd: NearDup, of: Document) -> None:
    """A near copy of ``of`` arriving now is tagged a duplicate of its representative."""
    rep = nd.engine.get([of.id], shingles=False)[of.id].tags
    rep_id = rep.dup_of or of.id
    copy = Document(f"{of.id}-copy", of.text + " The end.", lang=of.lang)
    assert nd.index([copy], progress=None).duplicates == 1
    tags = nd.engine.get([copy.id], shingles=False)[copy.id].tags
    assert tags.is_duplicate and tags.dup_of == rep_id


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """What queries of the duplicated documents find on a fresh embedded index."""
    docs = sample_docs(80)
    with NearDup.open(str(tmp_path_factory.mktemp("ref") / "ref.db"), CONFIG) as nd:
        nd.index(docs, batch_size=40, progress=None)
        dups = [d for d in docs if nd.engine.get([d.id], shingles=False)[d.id].tags.is_duplicate]
        tags = {i: d.tags for i, d in nd.engine.get([d.id for d in docs]).items()}
        return dups, tags, _found(nd, dups)


def test_tags_rewritten_keep_every_neardup_field(engine_target, reference):
    """Documents stored untagged, then every one's tags rewritten by ``retag`` (a partial
    update of ``neardup``'s tag fields on HTTP): their other fields are as stored, in
    ``_source`` too, they are found by their keys and verified as a fresh index does, and a
    near copy arriving afterwards is tagged a duplicate of the right representative."""
    target, opts = engine_target
    docs = sample_docs(80)
    dups, want_tags, want_found = reference
    assert dups, "the sample holds near-duplicates"
    ids = [d.id for d in docs]
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(docs, batch_size=40, tag=False, progress=None)
        nd.engine.refresh()
        before, sources = _signature(nd, ids), _sources(nd, ids)
        assert nd.retag() == len(dups)
        assert _signature(nd, ids) == before
        assert _sources(nd, ids) == sources
        assert {i: d.tags for i, d in nd.engine.get(ids).items()} == want_tags
        assert _found(nd, dups) == want_found
        _near_copy_is_found(nd, dups[0])


def test_a_text_changed_and_changed_back_is_signed_and_found_as_before(engine_target, reference):
    """``neardup index`` of a stored document with another text, then with its own again
    (the whole document sent each time): the same fields as when first stored, found by its
    keys as a fresh index finds it."""
    target, opts = engine_target
    docs = sample_docs(80)
    dups, want_tags, want_found = reference
    ids = [d.id for d in docs]
    with NearDup.open(target, CONFIG, **opts) as nd:
        nd.index(docs, batch_size=40, progress=None)
        nd.engine.refresh()
        before, sources = _signature(nd, ids), _sources(nd, ids)
        d = dups[0]
        other = Document(d.id, "a text of its own about the weather in the mountains " * 8)
        assert nd.index([other], progress=None).updated == 1
        assert _signature(nd, [d.id])[d.id] != before[d.id]
        assert nd.index([d], progress=None).updated == 1
        nd.engine.refresh()
        after = _signature(nd, ids)
        assert {i: v[:-1] for i, v in after.items()} == {i: v[:-1] for i, v in before.items()}
        if sources is not None:
            stamps = ("seq", "indexed_at")
            strip = lambda s: {k: v for k, v in s.items() if k not in stamps}  # noqa: E731
            got = _sources(nd, ids)
            assert {i: strip(s) for i, s in got.items()} == {
                i: strip(s) for i, s in sources.items()
            }
        assert {i: d.tags for i, d in nd.engine.get(ids).items()} == want_tags
        assert _found(nd, dups) == want_found
        _near_copy_is_found(nd, d)


def test_a_document_written_back_whole_by_a_user_keeps_its_signature(osmem_clone, reference):
    """Over HTTP, a user reads a document of neardup's own index and writes it back whole
    with a field of theirs added (``PUT``; on a real engine the index's pipeline checks the
    signature and stamps ``indexed_at`` again): every other neardup field is as it was, and
    the document is found by its keys and tagged as before."""
    docs = sample_docs(80)
    dups, want_tags, want_found = reference
    ids = [d.id for d in docs]
    with NearDup.open(osmem_clone.url, CONFIG, index="t", pipeline=http_pipeline()) as nd:
        nd.index(docs, batch_size=40, progress=None)
        nd.engine.refresh()
        before, sources = _signature(nd, ids), _sources(nd, ids)
        client = nd.engine.remote.client
        for d in dups:
            src = client.get(index="t", id=d.id)["_source"]
            src.setdefault("fields", {})["note"] = "checked by an editor"
            client.index(index="t", id=d.id, body=src, refresh=True)
        assert _signature(nd, ids) == before
        got = _sources(nd, ids)
        assert {i: {k: v for k, v in s.items() if k != "indexed_at"} for i, s in got.items()} == {
            i: {k: v for k, v in s.items() if k != "indexed_at"} for i, s in sources.items()
        }
        stored = nd.engine.get(ids)
        assert stored[dups[0].id].fields["note"] == "checked by an editor"
        assert {i: d.tags for i, d in stored.items()} == want_tags
        assert _found(nd, dups) == want_found
        _near_copy_is_found(nd, dups[0])
