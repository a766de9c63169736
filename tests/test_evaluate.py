import json

import pytest
from click.testing import CliRunner

from neardup.evaluation.evaluate import (
    ac1,
    confusion,
    equality_pairs,
    evaluate,
    hfm_separation,
)
from neardup.evaluation.markdown import to_markdown
from neardup.evaluation.corpus import load_corpus, load_labels

import numpy as np


def test_confusion_hand_computed():
    # 4 documents: m = 6 pairs; truth {01, 23}; found {01, 02}: a=1, b=1, c=1, d=3
    c = confusion({(0, 1), (2, 3)}, {(0, 1), (0, 2)}, 6, 0.9)
    assert (c.truth, c.found, c.common, c.unique_truth, c.unique_method) == (2, 2, 1, 1, 1)
    assert (c.precision, c.recall, c.f1) == (0.5, 0.5, 0.5)
    assert c.accuracy == pytest.approx(4 / 6)


def test_ac1_hand_computed():
    # A = 4/6, P' = (2+1+1)/12 = 1/3, p(E) = 2 * 1/3 * 2/3 = 4/9, AC1 = (2/3 - 4/9) / (5/9) = 0.4
    assert ac1({(0, 1), (0, 2)}, {(0, 1), (2, 3)}, 6) == pytest.approx(0.4)
    assert ac1({(0, 1)}, {(0, 1)}, 6) == pytest.approx(1.0)


def test_hfm_and_separation():
    scores = {(0, 1): 0.97, (0, 2): 0.91, (1, 2): 0.88}
    hfm, sep = hfm_separation(scores, {(0, 1), (0, 2)})
    assert hfm == 0.88 and sep == pytest.approx(0.91 - 0.88)
    assert hfm_separation({(0, 1): 0.5}, set()) == (0.5, None)


def test_pair_explosion_is_refused():
    from neardup.evaluation.evaluate import shared_key_counts
    from neardup.evaluation.corpus import EvaluationError

    keys = [np.array([7], dtype=np.uint64)] * 10  # 45 pairs share key 7
    assert len(shared_key_counts(keys)) == 45
    with pytest.raises(EvaluationError, match="shared by 10 documents"):
        shared_key_counts(keys, max_pairs=44)


def test_equality_pairs_min_match_and_set_like():
    keys = [
        np.array([1, 2, 3], dtype=np.uint64),
        np.array([1, 2, 9], dtype=np.uint64),
        np.array([1, 8, 9], dtype=np.uint64),
    ]
    assert equality_pairs(keys, 2) == {(0, 1): pytest.approx(2 / 3), (1, 2): pytest.approx(2 / 3)}
    assert set(equality_pairs(keys, 1)) == {(0, 1), (0, 2), (1, 2)}
    assert set(equality_pairs(keys, 1, set_like=True, threshold=0.5)) == {
        (0, 1),
        (1, 2),
    }  # 2/4 each; (0,2): 1/5


DOCS = [
    "The committee approved the annual budget after a long debate about schools roads and "
    "hospitals in the region.",
    "The committee approved the annual budget after a long debate about schools roads and "
    "hospitals in the region!",
    "Heavy rain flooded the northern valley overnight and farmers moved their cattle to higher "
    "ground before dawn.",
    "A new library opened downtown with a reading room for children a cafe and a hall for "
    "concerts on weekends.",
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tiny_labelled_set_exact_counts(tmp_path):
    corpus = load_corpus(
        write_jsonl(tmp_path / "c.jsonl", [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)])
    )
    labels = load_labels(
        write_jsonl(
            tmp_path / "l.jsonl",
            [
                {"id1": "d0", "id2": "d1"},
                {"id1": "d2", "id2": "d3"},
                {"id1": "d0", "id2": "d3", "label": "0"},
            ],
        ),
        corpus,
    )
    assert labels == {(0, 1), (2, 3)}
    ev = evaluate(
        corpus,
        methods=["engine", "text_stats:1", "text_stats:6"],
        thresholds=[0.9],
        truth="labels",
        labels=labels,
    )
    assert ev.pairs == 6
    eng = ev.rows["engine"][0]  # finds d0-d1 only: a=1, b=0, c=1, d=4
    assert (eng.found, eng.common, eng.precision, eng.recall) == (1, 1, 1.0, 0.5)
    assert eng.f1 == pytest.approx(2 / 3) and eng.accuracy == pytest.approx(5 / 6)
    k1 = ev.rows["text_stats:1"][0]  # d0/d1 differ only in the final . vs !
    assert (k1.found, k1.common, k1.recall, k1.accuracy) == (0, 0, 0.0, pytest.approx(4 / 6))
    # AC1(engine, text_stats:1): a=0, b=1, c=0, d=5: A = 5/6, P' = 1/12, p(E) = 2 * 1/12 * 11/12
    pe = 2 * (1 / 12) * (11 / 12)
    assert ev.agreement[0.9]["engine"]["text_stats:1"] == pytest.approx((5 / 6 - pe) / (1 - pe))
    md = to_markdown(ev)
    assert "| 0.90 | 2 | 1 | 1 | 1 | 0 | 0.50 | 1.00 | 0.67 | 0.8333 |" in md


def test_jaccard_truth_and_pairs_file(tmp_path):
    rows = [
        {"id": "p1", "id1": "a", "id2": "b", "text1": DOCS[0], "text2": DOCS[1], "label": "1"},
        {"id": "p2", "id1": "c", "id2": "d", "text1": DOCS[2], "text2": DOCS[3], "label": "0"},
    ]
    corpus = load_corpus(write_jsonl(tmp_path / "p.jsonl", rows))
    assert corpus.ids == ["a", "b", "c", "d"] and corpus.labels == {(0, 1)}
    ev = evaluate(corpus, methods=["minhash84", "super"], thresholds=[1.0, 0.9], truth="jaccard")
    assert [r.truth for r in ev.rows["minhash84"]] == [1, 1]  # identical canonical shingles
    assert ev.rows["minhash84"][0].common == 1 and ev.rows["super"][0].common == 1


def test_levenshtein_truth_counts_documents_of_20_words(tmp_path):
    a = " ".join(f"w{i}x" for i in range(25))  # 25 words, 99 characters
    b = a.replace("w7x", "w7y")  # one substitution: similarity 1 - 1/99
    c = " ".join(f"w{i}x" for i in range(19))  # 19 words: outside the scope
    d = " ".join(f"v{i}z" for i in range(22))
    rows = [{"id": k, "text": t} for k, t in zip("abcd", (a, b, c, d), strict=True)]
    corpus = load_corpus(write_jsonl(tmp_path / "c.jsonl", rows))
    ev = evaluate(
        corpus,
        methods=["text_stats:seq", "text_stats:freq"],
        thresholds=[1.0, 0.99],
        truth="levenshtein",
    )
    assert ev.scope == 3 and ev.pairs == 3
    assert [r.truth for r in ev.rows["text_stats:seq"]] == [0, 1]
    assert [(r.found, r.common) for r in ev.rows["text_stats:seq"]] == [
        (1, 0),
        (1, 1),
    ]  # same word lengths
    assert [r.found for r in ev.rows["text_stats:freq"]] == [0, 0]


def test_bad_input_names_file_and_line(tmp_path):
    from neardup.evaluation.corpus import EvaluationError

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "b"}\n')
    with pytest.raises(EvaluationError, match=r"bad.jsonl:2: a record needs 'text'"):
        load_corpus(bad)
    bad.write_text('{"id": "a", "text": "x"}\nnot json\n')
    with pytest.raises(EvaluationError, match=r"bad.jsonl:2: not JSON"):
        load_corpus(bad)
    corpus = load_corpus(
        write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}])
    )
    with pytest.raises(EvaluationError, match=r"l.jsonl:1: id\(s\) \['zz'\] are not in the corpus"):
        load_labels(write_jsonl(tmp_path / "l.jsonl", [{"id1": "a", "id2": "zz"}]), corpus)


def test_cli_json(tmp_path):
    from neardup.cli import main

    path = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)]
    )
    res = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(path),
            "--methods",
            "engine,imatch,kosinov:punct",
            "--thresholds",
            "1,0.9",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["rows"]["engine"][1]["common"] == 1 and out["truth_kind"] == "jaccard"
    bad = CliRunner().invoke(main, ["evaluate", str(path), "--methods", "nosuch"])
    assert bad.exit_code == 1 and "unknown method 'nosuch'" in bad.output


def test_engine_method_on_each_engine(engine_target, tmp_path):
    target, opts = engine_target
    corpus = load_corpus(
        write_jsonl(tmp_path / "c.jsonl", [{"id": f"d{i}", "text": t} for i, t in enumerate(DOCS)])
    )
    ev = evaluate(
        corpus,
        methods=["engine", "engine:mega"],
        thresholds=[1.0, 0.9],
        truth="jaccard",
        target=target,
        engine_opts=opts,
    )
    for name in ("engine", "engine:mega"):
        assert [(r.truth, r.found, r.common) for r in ev.rows[name]] == [(1, 1, 1), (1, 1, 1)]
