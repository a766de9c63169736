"""Detection that respects meaning: stop lists of function words only, the short-text guard,
languages beyond fa/ru/en, thresholds a user can tune (docs/canonicalization.md)."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given, settings, strategies as st

from neardup import Config, NearDup
from neardup.canonical import Canonicalizer
from neardup.canonical.stopwords import raw_stopwords
from neardup.signer import Signer

A = "Inflation went up in the first quarter and the bank will raise rates by two points before the election."
B = "Inflation went down in the second quarter and the bank will not raise rates by three points after the election."

#: Words no stop list may hold: negations, numbers and number words, directions and order,
#: comparatives and quantifiers, modals.
NEVER = {
    "en": "not no nor never none nothing t one two three first second million up down before after above below over under "
          "out off again then more most less least few all any each some only very than will would can could may might must "
          "shall should or".split(),
    "ru": "не ни нет без никогда один два три первый второй до после над под перед через между больше более меньше все "
          "много только может можно надо нельзя бы будет или".split(),
    "fa": "نه نمی نیست نبود هیچ یک دو سه اول دوم بالا پایین قبل بعد پیش پس بیشتر کمتر همه باید شاید یا بی".split(),
}


@pytest.mark.parametrize("lang", ["en", "ru", "fa"])
def test_stop_lists_are_small_data_files_naming_their_source(lang):
    text = resources.files("neardup.canonical").joinpath("data", f"stopwords_{lang}.txt").read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("Source:" in line for line in header)
    words = raw_stopwords(lang)
    assert 20 <= len(words) < 150 and len(set(words)) == len(words)


@pytest.mark.parametrize("lang", ["en", "ru", "fa"])
def test_no_stop_list_holds_a_negation_number_direction_or_modal(lang):
    assert not set(NEVER[lang]) & set(raw_stopwords(lang))


def test_persian_list_is_drawn_from_hazms():
    from hazm import stopwords_list

    assert set(raw_stopwords("fa")) <= set(stopwords_list())


def test_the_issue_pair_is_no_duplicate_and_no_exact_copy(tmp_path):
    nd = NearDup.open(str(tmp_path / "x.db"), Config())
    cmp = nd.compare(A, B)
    nd.close()
    assert cmp.resemblance < 0.8 and not cmp.exact_equal


CONTENT = st.lists(st.sampled_from("bank rates inflation election quarter points raise fell prices market report growth".split()),
                   min_size=3, max_size=14)
FUNCTION = st.sampled_from(["the", "of", "and", "in", "was", "is", "to", "by", "it", "they"])
CHANGES = {"negation": ["not", "no", "never", "nor"], "number": ["two", "three", "first", "second", "2", "3", "million"],
           "direction": ["up", "down", "before", "after", "more", "less", "above", "below"]}
EN = Signer(Config())


@settings(max_examples=150, deadline=None)
@given(words=CONTENT, fillers=st.lists(FUNCTION, min_size=3, max_size=14), at=st.integers(0, 20),
       kind=st.sampled_from(sorted(CHANGES)), data=st.data())
def test_texts_differing_in_a_negation_number_or_direction_are_never_exact_copies(words, fillers, at, kind, data):
    """A text with one negation, number or direction word inserted or swapped for another is
    no exact copy of the text without it, whatever function words are around."""
    base = [w for pair in zip(words, fillers, strict=False) for w in pair]
    at %= len(base) + 1
    word = data.draw(st.sampled_from(CHANGES[kind]))
    other = data.draw(st.sampled_from([w for w in CHANGES[kind] if w != word]))
    inserted = base[:at] + [word] + base[at:]
    swapped = base[:at] + [other] + base[at:]
    a, b, c = (EN.sign(" ".join(t), "en") for t in (base, inserted, swapped))
    assert a.exact != b.exact and b.exact != c.exact


def test_an_index_of_the_old_signature_version_says_how_to_re_sign(tmp_path):
    import sqlite3

    from neardup.engines.base import EngineError

    path = tmp_path / "old.db"
    NearDup.open(str(path)).close()
    db = sqlite3.connect(path)
    cfg = json.loads(db.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    cfg["version"] = 4
    db.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(cfg),))
    db.commit()
    db.close()
    with pytest.raises(EngineError, match=r"signature version 4.*re-sign by indexing the source documents again.*neardup index"):
        NearDup.open(str(path))


def test_function_words_still_go():
    assert Canonicalizer(Config()).tokens("The bank of the town and its rates") == ["bank", "town", "rates"]
