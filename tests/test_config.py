"""Config's choice settings: one table (CHOICES, from the Literal types of the fields)
decides both the type and the check."""

from __future__ import annotations

import importlib.util
import typing

import pytest

from neardup.config import CHOICES, LANGUAGES, Config, ConfigError, ConfigMismatch


def test_choices_are_the_literal_types_of_the_fields():
    hints = typing.get_type_hints(Config)
    for name, allowed in CHOICES.items():
        assert typing.get_origin(hints[name]) is typing.Literal, name
        assert typing.get_args(hints[name]) == allowed, name
    literal_fields = {n for n, h in hints.items() if typing.get_origin(h) is typing.Literal}
    assert literal_fields == set(CHOICES)
    assert "default_lang" not in CHOICES  # any language code (is_language_code), or auto


def test_default_lang_is_auto_or_any_language_code_kept_as_its_language():
    assert [
        Config(default_lang=c).default_lang for c in ("auto", *LANGUAGES, "de", "pt-BR", "ZH_Hant")
    ] == ["auto", *LANGUAGES, "de", "pt", "zh"]
    for bad in ("english", "", "e1", "x"):
        with pytest.raises(ConfigError, match="default_lang must be auto or a language code"):
            Config(default_lang=bad)


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_every_choice_is_accepted_and_nothing_else(name):
    for value in CHOICES[name]:
        assert getattr(Config(**{name: value}), name) == value
    with pytest.raises(
        ConfigError, match=f"{name} must be one of {', '.join(CHOICES[name])}, not 'bogus'"
    ):
        Config(**{name: "bogus"})


def test_signature_names_are_checked():
    with pytest.raises(ConfigError, match="unknown signature"):
        Config(signatures=("exact", "bogus"))
    assert Config(signatures=("exact", "text_stats", "kosinov")).signatures == (
        "exact",
        "text_stats",
        "kosinov",
    )


def test_persian_segmentation_settings_are_in_the_config_and_its_fingerprint():
    """fa_segmentation, fa_join_rules and fa_anchors change tokens, so they are settings of
    the index: stored and fingerprinted where they are not the defaults, and an index stored
    before they existed (no such keys) opens with the same fingerprint."""
    from neardup.canonical import Canonicalizer

    default = Config()
    stored_before = {k: v for k, v in default.to_dict().items() if not k.startswith("fa_")}
    assert Config.from_dict(stored_before).fingerprint() == default.fingerprint()
    assert "fa_segmentation" not in default.to_json()
    joined = Config(fa_segmentation="join", fa_join_rules=("lexicon",))
    other_anchors = Config(fa_anchors=(5, 2, 14))
    assert len({default.fingerprint(), joined.fingerprint(), other_anchors.fingerprint()}) == 3
    assert (
        Config.from_json(joined.to_json()) == joined
        and Config.from_json(other_anchors.to_json()) == other_anchors
    )
    with pytest.raises(ConfigMismatch, match="fa_segmentation"):
        default.check_same(joined, "the index")
    with pytest.raises(ConfigMismatch, match="fa_anchors"):
        other_anchors.check_same(default, "the index")
    text = "دانش آموزان کتاب را خواندند"
    configs = (default, other_anchors)
    if (
        importlib.util.find_spec("hazm") is not None
    ):  # the join segmentation takes hazm's word lists
        configs += (joined,)
    tokens = {c: Canonicalizer(c).tokens(text, "fa") for c in configs}
    assert len({tuple(t) for t in tokens.values()}) == len(configs)
    for bad in (
        {"fa_segmentation": "words"},
        {"fa_join_rules": ("nouns",)},
        {"fa_anchors": (0, 2, 1)},
    ):
        with pytest.raises(ConfigError):
            Config(**bad)
