"""Config's choice settings: one table (CHOICES, from the Literal types of the fields)
decides both the type and the check."""

from __future__ import annotations

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
    assert set(LANGUAGES) < set(CHOICES["default_lang"]) and "auto" in CHOICES["default_lang"]


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_every_choice_is_accepted_and_nothing_else(name):
    for value in CHOICES[name]:
        assert getattr(Config(**{name: value}), name) == value
    with pytest.raises(ConfigError, match=f"{name} must be one of {', '.join(CHOICES[name])}, not 'bogus'"):
        Config(**{name: "bogus"})


def test_signature_names_are_checked():
    with pytest.raises(ConfigError, match="unknown signature"):
        Config(signatures=("exact", "bogus"))
    assert Config(signatures=("exact", "text_stats", "kosinov")).signatures == ("exact", "text_stats", "kosinov")


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
    assert Config.from_json(joined.to_json()) == joined and Config.from_json(other_anchors.to_json()) == other_anchors
    with pytest.raises(ConfigMismatch, match="fa_segmentation"):
        default.check_same(joined, "the index")
    with pytest.raises(ConfigMismatch, match="fa_anchors"):
        other_anchors.check_same(default, "the index")
    text = "دانش آموزان کتاب را خواندند"
    tokens = {c: Canonicalizer(c).tokens(text, "fa") for c in (default, joined, other_anchors)}
    assert len({tuple(t) for t in tokens.values()}) == 3
    for bad in ({"fa_segmentation": "words"}, {"fa_join_rules": ("nouns",)}, {"fa_anchors": (0, 2, 1)}):
        with pytest.raises(ConfigError):
            Config(**bad)
