from neardup.config import Config
from neardup.signing.signatures.anchor import anchor_positions, anchor_shingles
from neardup.signing.signer import Signer


def test_digram_rule_hand_example():
    # 'a' + 'g' = 97 + 103 = 200 and 'c' + 'e' = 99 + 101 = 200, multiples of 50
    text = "xxagxx ceyy"
    assert anchor_positions(text).tolist() == [2, 7]
    assert anchor_shingles(text) == ["agxx", "ceyy"]


def test_digram_must_be_two_letters():
    assert anchor_positions("a g 1g").tolist() == []  # 'a',' ' and '1','g' are not letter pairs


def test_letter_rule_of_004():
    assert anchor_shingles("абв юга дею", letters="ю") == ["юга де", "ю"]


def test_no_anchor_whole_text_is_one_shingle():
    assert anchor_shingles("xyz") == ["xyz"]
    assert anchor_shingles("") == []


def test_edit_changes_only_nearby_shingles():
    base = "the cement agency placed ages of cedar wood near the garage gate"
    edited = base.replace("near", "beside")
    a, b = set(anchor_shingles(base)), set(anchor_shingles(edited))
    assert len(a & b) >= len(a) - 1


def test_signer_keys():
    s = Signer(Config(signatures=("exact", "anchor"), stopwords=False))
    k1 = s.sign("The cement agency placed ages of cedar.").keys["anchor"]
    k2 = s.sign("the CEMENT agency placed ages of cedar").keys["anchor"]
    assert len(k1) >= 2 and k1.tolist() == k2.tolist()
