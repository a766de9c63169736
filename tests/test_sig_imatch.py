import hashlib
import json

import pytest

from neardup.canonical import Canonicalizer
from neardup.config import Config
from neardup.signing.signatures import REGISTRY, ContextError, build_context, needs_context
from neardup.signing.signatures.imatch import build_lexicon
from neardup.signing.signatures.stats import Stats
from neardup.signing.signer import Signer

COLLECTION = [
    "zebra elephant giraffe antelope the cat",
    "zebra elephant giraffe antelope the dog",
    "elephant giraffe crocodile the",
    "the banana",
    "the supercalifragilisticexpialidocious zebra",
]
CFG = Config(stopwords=False, signatures=("exact", "imatch", "imatch_multi"))


def sha64(s: str) -> int:
    return int.from_bytes(hashlib.sha1(s.encode()).digest()[:8], "big")


@pytest.fixture(scope="module")
def ctx():
    return build_context(Canonicalizer(CFG), ((t, "en") for t in COLLECTION))


def test_context_is_json_and_keeps_terms_of_two_or_more_documents(ctx):
    assert json.loads(json.dumps(ctx)) == ctx
    assert ctx["n_docs"] == 5
    assert ctx["avg_word_len"] == pytest.approx(
        146 / 21
    )  # 21 tokens, 146 letters (the long word has 34)
    assert dict(zip(ctx["terms"], ctx["df"], strict=True)) == {
        "the": 5,
        "zebra": 3,
        "elephant": 3,
        "giraffe": 3,
        "antelope": 2,
    }
    assert needs_context(CFG) and not needs_context(Config())


def test_lexicon_rule(ctx):
    # zebra (5 letters) and the (3) are shorter than the mean 6.95; the has nidf 0 < 0.1;
    # words of one document (cat, crocodile, ...) and of > 25 letters are out
    assert build_lexicon(Stats(ctx, CFG, "imatch")) == {"antelope", "elephant", "giraffe"}


def test_signature_hand_example(ctx):
    s = Signer(CFG, ctx)
    k0, k1 = s.sign(COLLECTION[0]).keys["imatch"], s.sign(COLLECTION[1]).keys["imatch"]
    assert k0.tolist() == k1.tolist() == [sha64("antelope\nelephant\ngiraffe")]
    assert len(s.sign(COLLECTION[2]).keys["imatch"]) == 0  # 2 lexicon terms < imatch_min_terms = 3


def test_invariant_to_sentence_reordering(ctx):
    s = Signer(CFG, ctx)
    a = s.sign("Giraffe antelope here. Zebra elephant there!").keys["imatch"]
    b = s.sign("Zebra elephant there! Giraffe antelope here.").keys["imatch"]
    assert len(a) == 1 and a.tolist() == b.tolist()


def test_multi_lexicon_keys(ctx):
    cfg = CFG.replace(extra=(("imatch_min_terms", 1), ("imatch_lexicons", 4)))
    sig = REGISTRY["imatch_multi"](Canonicalizer(cfg), ctx)
    p = Signer(cfg, ctx).prepare(COLLECTION[0])
    parts = sig.parts(p)
    assert list(parts) == ["main", "sub1", "sub2", "sub3", "sub4"]
    assert parts["main"].tolist() == [sha64("antelope\nelephant\ngiraffe")]
    for j, comp in enumerate(sig.components[1:], 1):
        sub = [w for w in ("antelope", "elephant", "giraffe") if sig.member[w] >> j & 1]
        assert parts[comp].tolist() == ([sha64("\n".join(sub))] if sub else [])
    assert len(sig(p)) == sum(len(v) for v in parts.values())


def test_missing_or_foreign_context_is_a_clear_error(ctx):
    with pytest.raises(ContextError, match="needs collection statistics"):
        Signer(CFG)
    with pytest.raises(ContextError, match="stopwords"):
        Signer(CFG.replace(stopwords=True), ctx)
