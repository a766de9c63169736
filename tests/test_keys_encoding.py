"""Keyword strings of signature keys: 16 lowercase hex digits of each 64-bit key (after the
position for positional fields), and back."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup.keys.encoding import POSITIONAL, parse_keys, render_keys

KEYS = st.lists(st.integers(0, 2**64 - 1), max_size=200)


@given(KEYS)
def test_each_key_is_its_sixteen_hex_digits(keys):
    arr = np.array(keys, dtype=np.uint64)
    assert render_keys("winnow", arr) == [f"{k:016x}" for k in keys]
    positional = next(iter(sorted(POSITIONAL)))
    assert render_keys(positional, arr) == [f"{i}:{k:016x}" for i, k in enumerate(keys)]
    for field in ("winnow", positional):
        assert parse_keys(field, render_keys(field, arr)).tolist() == keys
