"""The benchmark's synthetic collections: deterministic, and their edits are near-duplicates."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import synth  # noqa: E402
from neardup.config import Config  # noqa: E402
from neardup.signing.signer import Signer
from neardup.signing.records import Document  # noqa: E402
from neardup.sketches.verify import resemblance  # noqa: E402

BASE = [
    Document(
        "e1",
        "The central bank bought bills for resale. Dealers said the market was quiet today. "
        "Rates were unchanged at the close of trading.",
        lang="en",
    ),
    Document(
        "r1",
        "Центральный банк купил векселя. Дилеры сказали, что рынок был спокоен. "
        "Ставки не изменились к закрытию.",
        lang="ru",
    ),
    Document(
        "f1",
        "بانک مرکزی اوراق را خریداری کرد. معامله‌گران گفتند که بازار آرام بود. "
        "نرخ‌ها تا پایان معاملات تغییری نکرد.",
        lang="fa",
    ),
]


def test_same_seed_same_stream():
    a = [s.doc.text for s in synth.Generator(BASE, seed=3).take(200)]
    b = [s.doc.text for s in synth.Generator(BASE, seed=3).take(200)]
    c = [s.doc.text for s in synth.Generator(BASE, seed=4).take(200)]
    assert a == b
    assert a != c


def test_stream_starts_with_the_base_and_ids_are_unique():
    docs = [s.doc for s in synth.Generator(BASE, seed=1).take(300)]
    assert [d.text for d in docs[:3]] == [d.text for d in BASE]
    assert len({d.id for d in docs}) == len(docs)


def test_queries_leave_the_stream_unchanged():
    g1, g2 = synth.Generator(BASE, seed=5), synth.Generator(BASE, seed=5)
    g1.take(50)
    q = g1.query("q", random.Random(0))
    assert q.doc.id == "q"
    assert [s.doc.text for s in g1.take(50)] == [s.doc.text for s in (g2.take(100)[50:])]


def test_persian_variants_fold_back_to_the_same_tokens():
    signer = Signer(Config())
    text = BASE[2].text
    variant = text.replace("ی", "ي").replace("ک", "ك")
    assert signer.sign(variant).exact == signer.sign(text).exact


def test_edits_stay_close_to_their_source():
    signer = Signer(Config())
    g = synth.Generator(BASE, seed=9, dup_rate=1.0)
    close = 0
    for s in g.take(120)[3:]:
        src = g.recent[s.source] if s.source >= 0 else None
        if src is None:
            continue
        r = resemblance(signer.sign(s.doc).shingles, signer.sign(src.doc).shingles)
        close += r > 0.2
    assert close > 50


def test_corpus_sentence_pool_if_present():
    shared = ROOT.parent / "shared" / "corpora"
    if not (shared / "en.jsonl").exists():
        pytest.skip(f"corpora not found at {shared}")
    from benchmarks import corpora

    docs = corpora.load("en", limit=50)
    pool = synth.SentencePool(docs)
    assert pool.sentences["en"] and "en" in pool.langs
