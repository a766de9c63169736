"""An index of an older signature version this neardup opens (config.OPENS_VERSIONS) keeps
working as before: its stored ``Config.version`` decides the keys new documents and queries
get (version 5: SimHash keys of single blocks; 6: of pairs of blocks), on both engines."""

from __future__ import annotations

import numpy as np
import pytest

from neardup import Config, Document, NearDup
from neardup.config import OPENS_VERSIONS, SIGNATURE_VERSION
from neardup.sketches.simhash import agreeing_blocks, block_keys

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


def test_the_versions_have_different_simhash_keys():
    fp = 0x0123_4567_89AB_CDEF
    assert len(block_keys(fp, 3, agreeing_blocks(5))) == 4
    assert len(block_keys(fp, 3, agreeing_blocks(SIGNATURE_VERSION))) == 10
    assert not set(block_keys(fp, 3, agreeing_blocks(5)).tolist()) & set(
        block_keys(fp, 3, agreeing_blocks(SIGNATURE_VERSION)).tolist()
    )
