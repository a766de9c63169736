"""The table of built-in signatures (neardup.keys.builtin.BUILTIN): each signature's
reference form, its keys of one prepared document, gives what the signer stores from the
batch form, and every reader of the names (config, candidate rule, key encoding) reads the
table."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.config import CONTAINMENT_SAMPLES, SIGNATURES, Config
from neardup.matching.candidates import RESEMBLANCE_FIELDS, CandidateRule
from neardup.keys.builtin import BUILTIN
from neardup.keys.encoding import POSITIONAL
from neardup.signing.records import Document
from neardup.signing.signer import Signer

TEXTS = [
    "the quick brown fox jumps over the lazy dog near the river bank today",
    "the quick brown fox jumps over the lazy dog near the river bank tonight",
    "a completely different sentence about cats sleeping in the warm afternoon sun",
    "short text",
    "Быстрая коричневая лиса прыгает через ленивую собаку у реки сегодня утром",
]


@pytest.mark.parametrize("shingle", ["word", "char"])
def test_each_signature_of_one_document_is_what_the_batch_stores(shingle):
    config = Config(signatures=tuple(BUILTIN), shingle=shingle, mod_m=4)
    signer = Signer(config)
    signed = signer.sign_batch([Document(str(i), t) for i, t in enumerate(TEXTS)])
    for doc in signed:
        prepared = signer.prepare(doc.doc.text, doc.lang)
        for name, sig in BUILTIN.items():
            reference = sig(config)(prepared)
            assert np.array_equal(np.sort(reference), np.sort(doc.keys[name])), (name, doc.id)


def test_the_readers_of_the_names_follow_the_table():
    assert SIGNATURES == tuple(n for n, s in BUILTIN.items() if s.default)
    assert set(CONTAINMENT_SAMPLES) == {n for n, s in BUILTIN.items() if s.sample}
    assert POSITIONAL == {n for n, s in BUILTIN.items() if s.positional}
    assert set(RESEMBLANCE_FIELDS) == set(CandidateRule(Config()).needs())
    assert all(BUILTIN[f].resemblance for f in RESEMBLANCE_FIELDS)


def test_min_match_of_the_band_keys_is_the_configs():
    config = Config(threshold=0.8)
    assert BUILTIN["minhash"](config).min_match == config.min_match >= 1
    assert CandidateRule(config).needs()["minhash"] == config.min_match
