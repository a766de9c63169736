"""Config's choice settings: one table (CHOICES, from the Literal types of the fields)
decides both the type and the check."""

from __future__ import annotations

import typing

import pytest

from neardup.config import CHOICES, LANGUAGES, Config, ConfigError


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
