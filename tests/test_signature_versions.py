"""An index of an older signature version this neardup opens (config.OPENS_VERSIONS) keeps
working as before: its stored ``Config.version`` decides the keys new documents and queries
get (version 5: SimHash keys of single blocks; 6: of pairs of blocks, a winnowing window of
8 and hex keywords; 7: a window of 12 and base64url keywords), on every engine."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neardup import Config, Document, NearDup
from neardup.config import OPENS_VERSIONS, SIGNATURE_VERSION, default_winnow_window
from neardup.sketches.simhash import agreeing_blocks, block_keys

from .test_engine_refusals import request

BASE = (
    "the committee approved the new budget for schools hospitals and roads after a long "
    "debate in parliament where the opposition asked for more money for rural clinics and "
    "the minister promised a review of the spending plan before the end of the year"
)
EDITED = BASE.replace("end of the year", "end of the month")


def _simhash_candidates(nd: NearDup, text: str) -> list[str]:
    """Ids of stored documents a copy of ``text`` shares a SimHash key with."""
    s = nd.signer.sign_batch([Document("q", text)])[0]
    q = nd.candidate_query({"simhash": s.keys["simhash"]}, s.n_shingles)
    return [c.id for c in nd.engine.candidates([q])[0]]


@pytest.mark.parametrize("version", OPENS_VERSIONS)
def test_an_index_signs_and_queries_as_its_version_says(engine_target, version):
    target, opts = engine_target
    with NearDup.open(target, Config(version=version), **opts) as nd:
        nd.index([Document("a", BASE)], progress=None)
        nd.engine.refresh()
    # reopened as later runs do: without settings, and with the default ones (this version's)
    for asked in (None, Config()):
        with NearDup.open(target, asked, **opts) as nd:
            assert nd.config.version == version
    with NearDup.open(target, **opts) as nd:
        rep = nd.index([Document("b", EDITED)], progress=None)
        nd.engine.refresh()
        assert rep.duplicates == 1
        stored = nd.engine.get(["a", "b"])
        j = agreeing_blocks(version)
        for d in stored.values():
            want = block_keys(d.simhash, nd.config.simhash_k, j)
            assert np.array_equal(np.sort(d.keys["simhash"]), np.sort(want))
        assert stored["b"].tags.dup_of == "a"
        assert "a" in _simhash_candidates(nd, BASE)  # the query's keys are the index's kind
        matches = nd.query(EDITED)
        assert {m.id for m in matches} >= {"a", "b"}


SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample.jsonl"
#: A news text of 341 words, and a passage of 70 of its words.
LONG = next(
    r["text"]
    for r in map(json.loads, SAMPLE.read_text(encoding="utf-8").splitlines())
    if r["id"] == "en-reuters-c7807b1aedb6"
)
PASSAGE = " ".join(LONG.split()[120:190])
#: How each version writes a keyword in an HTTP engine (``neardup.keys.<field>``).
KEYWORD = {6: re.compile(r"[0-9a-f]{16}"), 7: re.compile(r"[A-Za-z0-9_-]{11}")}


def _named(target: str, opts: dict[str, Any], version: int) -> tuple[str, dict[str, Any]]:
    """The target and options of an index named for ``version``, on the engine of
    ``engine_target`` (another index of the same cluster, or another file beside)."""
    if "index" in opts:
        return target, {**opts, "index": f"v{version}"}
    return str(Path(target).with_name(f"v{version}.db")), opts


def test_an_index_of_version_6_works_beside_one_of_version_7(engine_target):
    target, opts = engine_target
    for v in (6, 7):
        t, o = _named(target, opts, v)
        with NearDup.open(t, Config(version=v), **o) as nd:
            nd.index([Document("a", BASE), Document("long", LONG)], progress=None)
    winnow = {}
    for v in (6, 7):  # reopened without settings, as later runs do: extended and queried
        t, o = _named(target, opts, v)
        with NearDup.open(t, **o) as nd:
            assert (nd.config.version, nd.config.winnow_window) == (v, default_winnow_window(v))
            rep = nd.index(
                [Document("b", EDITED), Document("long-copy", LONG + " The talks go on.")],
                progress=None,
            )
            nd.engine.refresh()
            assert rep.duplicates == 2
            stored = nd.engine.get(["b", "long", "long-copy"])
            assert stored["b"].tags.dup_of == "a" and stored["long-copy"].tags.dup_of == "long"
            assert {m.id for m in nd.query(EDITED)} >= {"a", "b"}
            found = nd.query(PASSAGE, mode="containment")
            assert {m.id for m in found} >= {"long", "long-copy"}
            winnow[v] = stored["long"].keys["winnow"]
            if "index" in o:  # what the engine holds: each version's keywords
                src = request(t, "GET", f"/{o['index']}/_doc/long")["_source"]["neardup"]
                held = [k for ks in src["keys"].values() for k in ks]
                assert held and all(KEYWORD[v].fullmatch(k.split(":")[-1]) for k in held)
    assert 1.2 * len(winnow[7]) < len(winnow[6])  # a window of 12 keeps fewer keys than 8


def test_the_versions_have_different_simhash_keys():
    fp = 0x0123_4567_89AB_CDEF
    assert len(block_keys(fp, 3, agreeing_blocks(5))) == 4
    assert len(block_keys(fp, 3, agreeing_blocks(SIGNATURE_VERSION))) == 10
    assert not set(block_keys(fp, 3, agreeing_blocks(5)).tolist()) & set(
        block_keys(fp, 3, agreeing_blocks(SIGNATURE_VERSION)).tolist()
    )
