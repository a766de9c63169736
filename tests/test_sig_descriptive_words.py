import math
import zlib

import numpy as np
import pytest

from neardup.canonical import Canonicalizer
from neardup.config import Config
from neardup.signing.signatures import REGISTRY, build_context, needs_context
from neardup.signing.signatures.stats import Stats
from neardup.signing.signer import Signer

from .test_sig_imatch import COLLECTION

CFG = Config(stopwords=False, signatures=("exact", "descriptive_words"))


@pytest.fixture(scope="module")
def ctx():
    return build_context(Canonicalizer(CFG), ((t, "en") for t in COLLECTION))


def parts(text, ctx, cfg=CFG):
    signer = Signer(cfg, ctx)
    return REGISTRY["descriptive_words"](signer.canonicalizer, ctx).parts(
        signer.prepare(text, "en")
    )


def crc(s):
    return [zlib.crc32(s.encode())]


def test_weights_hand_values(ctx):
    st = Stats(ctx, CFG, "descriptive_words")
    assert st.idf("zebra") == pytest.approx(math.log(5 / 3))
    assert st.idf("unseen") == pytest.approx(math.log(5))  # absent = seen once
    # RIDF = log2(N/df) + log2(1 - exp(-cf/N)); antelope: df = cf = 2, N = 5
    assert st.ridf("antelope") == pytest.approx(math.log2(5 / 2) + math.log2(1 - math.exp(-2 / 5)))
    # idf_opt peaks at df = sqrt(N)
    assert st.idf_opt("zebra") == pytest.approx(
        math.log(5) - abs(math.log(3) - math.log(math.sqrt(5)))
    )


def test_top_six_by_tf_sorted_alphabetically(ctx):
    p = parts("b a a c c c d d d d e e e e e f f f f f f g", ctx)
    assert p["tf"].tolist() == crc("a b c d e f")  # g and b tie at tf 1: alphabetical order keeps b
    assert p["crc32"].tolist() == crc("b a a c c c d d d d e e e e e f f f f f f g")


def test_two_longest_sentences(ctx):
    p = parts("One two three. One two three four five! A b. Six seven eight nine?", ctx)
    assert p["long2"].tolist() == crc("one two three four five six seven eight nine")


def test_two_heaviest_sentences(ctx):
    # idf: zebra ln(5/3), antelope ln(5/2), unseen words ln 5; 'the' 0
    p = parts("Antelope antelope. The the the the the the. Qwerty. Zebra.", ctx)
    # weights: antelope 2*2*ln2.5 = 3.67, qwerty 1*ln5 = 1.61, zebra 0.51, the 0
    assert p["heavy2"].tolist() == crc("antelope antelope qwerty")


def test_tfidf_prefers_rare_words(ctx):
    p = parts(
        "the the the the the zebra zebra antelope qwerty",
        ctx,
        CFG.replace(extra=(("sharapova_top", 2),)),
    )
    # tf*idf: the 0, zebra 2*0.51 = 1.02, antelope 0.92, qwerty 1.61
    assert p["tfidf"].tolist() == crc("qwerty zebra")
    assert p["tf"].tolist() == crc("the zebra")


def test_support_vector_blocks_survive_one_changed_word(ctx):
    cfg = CFG.replace(extra=(("support_k", 3),))
    sig = REGISTRY["descriptive_words"](Canonicalizer(cfg), ctx)
    assert sig.support == ["antelope", "elephant", "giraffe", "zebra"]  # nidf >= 0.1, highest df
    s = Signer(cfg, ctx)
    a = sig.parts(s.prepare("antelope elephant giraffe zebra", "en"))["support"]
    b = sig.parts(s.prepare("antelope elephant giraffe", "en"))["support"]
    assert len(a) == 4 and len(b) == 3 and len(np.intersect1d(a, b)) == 3


def test_combined_set_is_positional(ctx):
    s = Signer(CFG, ctx)
    keys = s.sign("zebra elephant. giraffe antelope.", "en").keys["descriptive_words"]
    assert len(keys) == len(set(keys.tolist())) >= 7


def test_the_old_name_needs_the_context_and_signs_the_same(ctx):
    """Indexes built when the signature was called "sharapova" keep working under that name."""
    old = CFG.replace(signatures=("exact", "sharapova"))
    assert needs_context(old) and needs_context(CFG)
    text = "zebra elephant. giraffe antelope zebra."
    assert (
        Signer(old, ctx).sign(text, "en").keys["sharapova"].tolist()
        == Signer(CFG, ctx).sign(text, "en").keys["descriptive_words"].tolist()
    )


def test_the_signer_makes_its_signatures_with_its_one_canonicalizer(ctx):
    canonicalizer = Canonicalizer(CFG)
    signer = Signer(CFG, ctx, canonicalizer=canonicalizer)
    assert signer.canonicalizer is canonicalizer
    assert signer.extra_signatures["descriptive_words"].canon is canonicalizer
