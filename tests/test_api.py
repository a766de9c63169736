"""Index-time tagging, 1-to-N queries, compare, N-to-N clusters and search folding."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Config, Document, NearDup

BASE = (
    "Reuters reported that the central bank cut its base lending rate by half a point to ten "
    "and a half percent after money market conditions eased and sterling strengthened against "
    "the dollar in active trading on Monday"
)
#: BASE inside a text many times its length (containment, not resemblance)
LONG = (
    BASE
    + " "
    + " ".join(
        f"extra sentence number {i} about markets bonds equities and currencies" for i in range(40)
    )
)


@pytest.fixture
def nd(tmp_path):
    with NearDup.open(str(tmp_path / "x.db"), Config(threshold=0.7)) as n:
        yield n


def test_later_copies_join_the_cluster_of_the_earlier_document(nd):
    nd.index([Document("orig", BASE)], progress=None)
    rep = nd.index(
        [
            Document("copy1", BASE + " traders said"),
            Document("copy2", BASE + " traders said today"),
            Document(
                "other",
                "a recipe for bread with flour water salt and yeast baked in a hot oven "
                "for forty minutes",
            ),
        ],
        batch_size=2,
        progress=None,
    )
    assert rep.indexed == 3 and rep.duplicates == 2
    docs = nd.engine.get(["orig", "copy1", "copy2", "other"])
    assert docs["orig"].tags.cluster_id == "orig" and not docs["orig"].tags.is_duplicate
    assert docs["copy1"].tags.cluster_id == "orig" and docs["copy1"].tags.dup_of == "orig"
    assert (
        docs["copy2"].tags.cluster_id == "orig" and docs["copy2"].tags.dup_of == "orig"
    )  # copy1 is a member, not a representative
    assert docs["copy2"].tags.max_resemblance >= 0.7 and docs["copy2"].tags.is_duplicate
    assert docs["other"].tags.cluster_id == "other" and docs["other"].tags.dup_of is None


def test_retag_reproduces_index_time_tags(nd):
    nd.index([Document("orig", BASE), Document("copy1", BASE + " traders said")], progress=None)
    before = {i: d.tags for i, d in nd.engine.get(["orig", "copy1"]).items()}
    nd.engine.update_tags({i: type(t)(cluster_id=i) for i, t in before.items()})
    assert nd.retag() == 1
    assert {i: d.tags for i, d in nd.engine.get(["orig", "copy1"]).items()} == before


def test_query_reports_exact_similarities(nd):
    nd.index([Document("orig", BASE)], progress=None)
    m = nd.query(BASE + " traders said")
    assert len(m) == 1 and m[0].id == "orig"
    sa = nd.signer.sign(Document("", BASE + " traders said")).shingles
    sb = nd.engine.get(["orig"])["orig"].shingles
    inter = len(set(sa.tolist()) & set(sb.tolist()))
    assert m[0].intersection == inter
    assert m[0].resemblance == inter / len(set(sa.tolist()) | set(sb.tolist()))
    assert m[0].containment_ba == inter / len(sb)


def test_containment_finds_a_document_inside_a_longer_one(nd):
    nd.index([Document("long", LONG)], progress=None)
    assert nd.query(BASE) == []  # resemblance is low
    m = nd.query(BASE, mode="containment", threshold=0.9)
    assert [x.id for x in m] == ["long"] and m[0].containment == 1.0


def test_query_by_stored_id_excludes_itself(nd):
    nd.index([Document("orig", BASE), Document("copy", BASE + " traders said")], progress=None)
    assert [m.id for m in nd.query(id="orig")] == ["copy"]
    with pytest.raises(KeyError):
        nd.query(id="missing")


def test_compare_explains_the_pair(nd):
    c = nd.compare(BASE, BASE + " traders said")
    assert c.resemblance > 0.8 and c.containment == 1.0 and not c.exact_equal
    assert c.collisions["minhash"]["shared"] >= 1 and c.simhash_hamming <= 10
    assert c.shared_shingles and all(len(s.split()) == 5 for s in c.shared_shingles)
    assert c.shared_passages == [
        " ".join(BASE.split())
    ]  # every shingle of a is shared: all of its text
    assert c.to_dict()["shared_passages"] == c.shared_passages
    apart = nd.compare(
        "completely unrelated words about gardening and tomato plants in spring", BASE
    )
    assert apart.shared_passages == [] and apart.shared_shingles == []


def test_clusters_and_search_folding(nd):
    nd.index(
        [
            Document("orig", BASE),
            Document("copy1", BASE + " traders said"),
            Document(
                "other",
                "bread flour water salt yeast oven baked forty minutes crust crumb kitchen recipe",
            ),
        ],
        progress=None,
    )
    cl = nd.clusters(write=True)
    assert len(cl) == 1 and cl[0].members == ["orig", "copy1"] and cl[0].representative_id == "orig"
    assert nd.engine.read_clusters()[0].members == ["orig", "copy1"]
    hits = nd.search("central bank", dedupe=True)
    assert len(hits) == 1 and len(hits[0].folded) == 1
    hits = nd.search("central bank", dedupe=True, threshold=0.7)  # on the fly, not from tags
    assert len(hits) == 1 and len(hits[0].folded) == 1
    assert len(nd.search("central bank")) == 2


def test_mod_m_sample_as_a_containment_signature(tmp_path):
    cfg = Config(threshold=0.7, signatures=("exact", "minhash", "modm"), mod_m=4)
    with NearDup.open(str(tmp_path / "m.db"), cfg) as nd:
        nd.index([Document("long", LONG)], progress=None)
        s = nd.signer.sign(Document("q", BASE))
        assert len(s.keys["modm"]) and all(int(k) % 4 == 0 for k in s.keys["modm"])
        assert [m.id for m in nd.query(BASE, mode="containment", threshold=0.9)] == ["long"]


def test_extra_signatures_propose_candidates_and_pairs(tmp_path):
    # anchor-bounded shingles only: pairs come from the 'anchor' field alone, with no SimHash filter
    cfg = Config(threshold=0.7, signatures=("anchor",))
    with NearDup.open(str(tmp_path / "a.db"), cfg) as nd:
        nd.index(
            [
                Document("orig", BASE),
                Document("copy", BASE + " traders said"),
                Document(
                    "other",
                    "bread flour water salt yeast oven baked forty minutes crust crumb "
                    "kitchen recipe",
                ),
            ],
            progress=None,
        )
        assert [(p.a, p.b) for p in nd.pairs(fields=("anchor",))] == [("copy", "orig")]
        assert [m.id for m in nd.query(id="orig")] == ["copy"]


def test_context_signatures_build_collection_statistics_once(tmp_path):
    cfg = Config(threshold=0.7, signatures=("exact", "minhash", "imatch"))
    with NearDup.open(str(tmp_path / "c.db"), cfg) as nd:
        docs = [Document(str(i), f"{BASE} variant {i} with words number {i}") for i in range(5)]
        nd.index(docs, progress=None)
        ctx = nd.engine.get_meta("context")
        assert ctx
        nd.index([Document("late", BASE)], progress=None)
        assert nd.engine.get_meta("context") == ctx  # frozen after the first collection
        assert "imatch" in nd.engine.get(["late"])["late"].keys
    with NearDup.open(str(tmp_path / "c.db")) as again:
        assert again.signer.context == ctx


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \n\r\x0b\x85\u2028ab", max_size=6000), st.integers(0, 8200))
def test_first_line_reads_the_head_as_the_whole_text_would(text, pad):
    """The display title from the first 4 KB is the one from splitting the whole text."""
    from neardup.matching.clustering import first_line

    x = " " * pad + text
    whole = next((ln.strip() for ln in x.splitlines() if ln.strip()), "")
    assert first_line(x) == (whole if len(whole) <= 80 else whole[:79].rstrip() + "…")
