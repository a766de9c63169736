from neardup.config import Config
from neardup.signing.signatures import REGISTRY
from neardup.signing.signatures.common import digest64
from neardup.signing.signatures.text_stats import test_strings as text_stats_strings
from neardup.signing.signer import Signer


def keys(text):
    s = Signer(Config(signatures=("exact", "text_stats")))
    p = s.prepare(text)
    return REGISTRY["text_stats"](s.canonicalizer, None).parts(p)


def test_hand_computed_strings():
    t = text_stats_strings("Hello, world. Hi!")
    assert t["punct"] == "1,1,0,0,0,0,1,0,0,0,2"  # . , - _ : ; ! ? ( ) space
    assert t["lengths"] == "1-0,2-1,3-0,4-0,5-2"
    assert t["means"] == "4.00-1.50-3-2"  # 12/3 letters per word, 3 words / 2 sentences
    assert t["freq"] == "hello-1,hi-1,world-1"
    assert t["seq"] == "5,5,2"
    assert t["all"] == "|".join(t[c] for c in ("punct", "lengths", "means", "freq", "seq"))


def test_keys_are_md5_64_of_the_strings():
    k = keys("Hello, world. Hi!")
    assert int(k["punct"][0]) == digest64("1,1,0,0,0,0,1,0,0,0,2", "md5")


def test_test1_ignores_word_substitutions_that_keep_punctuation():
    a, b = keys("Hello, world. Hi!"), keys("Goodbye, planet. Yo!")
    assert a["punct"] == b["punct"]
    assert a["lengths"] != b["lengths"] and a["freq"] != b["freq"] and a["all"] != b["all"]


def test_test5_and_test2_ignore_same_length_substitutions_test4_does_not():
    a, b = keys("The cat sat on the mat."), keys("The dog sat on the rug.")
    assert a["seq"] == b["seq"] and a["lengths"] == b["lengths"] and a["means"] == b["means"]
    assert a["freq"] != b["freq"]


def test_test4_ignores_word_order_and_case():
    a, b = keys("alpha beta gamma. beta"), keys("Beta gamma beta alpha.")
    assert a["freq"] == b["freq"] and a["seq"] != b["seq"]


def test_tags_are_removed_first_and_persian_punctuation_counts():
    assert keys("<p>Hello,   world.</p>\n")["all"] == keys("Hello, world.")["all"]
    assert text_stats_strings("سلام، دنیا؟")["punct"] == text_stats_strings("سلام, دنیا?")["punct"]


def test_no_words_no_keys():
    s = Signer(Config(signatures=("exact", "text_stats")))
    assert len(s.sign("... !!!").keys["text_stats"]) == 0
    assert len(s.sign("one two three.").keys["text_stats"]) == 6


def test_the_old_name_signs_the_same_under_its_own_field():
    """Indexes built when the signature was called "kosinov" keep their config and key field."""
    old = Config(signatures=("exact", "kosinov"))
    assert Config.from_json(old.to_json()) == old
    a = Signer(old).sign("Hello, world. Hi!").keys
    b = Signer(Config(signatures=("exact", "text_stats"))).sign("Hello, world. Hi!").keys
    assert "text_stats" not in a and "kosinov" not in b
    assert a["kosinov"].tolist() == b["text_stats"].tolist() and len(a["kosinov"]) == 6
