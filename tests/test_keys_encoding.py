"""Keyword strings of signature keys, as an index's signature version writes them: 16
lowercase hex digits of each 64-bit key before version 7, its 11 unpadded base64url
characters from it (after the position for positional fields), and back. The fast forms
(one hex or base64 of all the keys) equal the reference form, one key at a time."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.config import OPENS_VERSIONS
from neardup.keys.encoding import (
    BASE64_FROM,
    POSITIONAL,
    key_of,
    keyword,
    parse_keys,
    render_batch,
    render_keys,
)

KEYS = st.lists(st.integers(0, 2**64 - 1), max_size=200)
POSITIONAL_FIELD = next(iter(sorted(POSITIONAL)))


@given(KEYS)
def test_before_version_7_each_key_is_its_sixteen_hex_digits(keys):
    arr = np.array(keys, dtype=np.uint64)
    assert render_keys("winnow", arr, 6) == [f"{k:016x}" for k in keys]
    assert render_keys(POSITIONAL_FIELD, arr, 6) == [f"{i}:{k:016x}" for i, k in enumerate(keys)]


@given(KEYS)
def test_from_version_7_each_key_is_the_base64url_of_its_bytes(keys):
    arr = np.array(keys, dtype=np.uint64)
    want = [base64.urlsafe_b64encode(k.to_bytes(8, "big")).decode()[:11] for k in keys]
    assert render_keys("winnow", arr, 7) == want
    assert all(len(t) == 11 and "=" not in t for t in want)
    assert render_keys(POSITIONAL_FIELD, arr, 7) == [f"{i}:{t}" for i, t in enumerate(want)]


@pytest.mark.parametrize("version", OPENS_VERSIONS)
@given(keys=KEYS)
def test_the_fast_forms_equal_the_reference_form(version, keys):
    arr = np.array(keys, dtype=np.uint64)
    texts = [keyword(k, version) for k in keys]
    assert render_keys("winnow", arr, version) == texts
    assert [key_of(t, version) for t in texts] == keys
    for field in ("winnow", POSITIONAL_FIELD):
        back = parse_keys(field, render_keys(field, arr, version), version)
        assert back.dtype == np.uint64 and back.tolist() == keys


def test_positional_keys_come_back_in_position_order():
    arr = np.arange(12, dtype=np.uint64) * np.uint64(2**60 + 7)
    shuffled = render_keys(POSITIONAL_FIELD, arr, BASE64_FROM)[::-1]
    assert parse_keys(POSITIONAL_FIELD, shuffled, BASE64_FROM).tolist() == arr.tolist()


@pytest.mark.parametrize("bad", ["AAAAAAAAAP", "AAAAAAAAAP8A", "AAAAAAAA*P8"])
def test_a_malformed_keyword_is_refused(bad):
    with pytest.raises(ValueError):
        parse_keys("winnow", [bad], BASE64_FROM)
    with pytest.raises(ValueError):
        key_of(bad, BASE64_FROM)


FIELDS = sorted(POSITIONAL) + ["exact", "winnow"]
#: A batch: each document's key fields (in its own order), empty key arrays included.
BATCHES = st.lists(
    st.lists(st.tuples(st.sampled_from(FIELDS), KEYS.map(lambda k: k[:40])), max_size=5).map(dict),
    max_size=6,
)


@pytest.mark.parametrize("version", OPENS_VERSIONS)
@given(batch=BATCHES)
def test_a_batch_rendered_at_once_equals_each_document_rendered_alone(version, batch):
    keys = [{f: np.array(k, dtype=np.uint64) for f, k in doc.items()} for doc in batch]
    got = render_batch(keys, version)
    assert got == [{f: render_keys(f, a, version) for f, a in doc.items()} for doc in keys]
    assert [list(d) for d in got] == [list(doc) for doc in batch]  # fields in the same order
    for doc, rendered in zip(batch, got, strict=True):
        for f, k in doc.items():
            ref = [keyword(x, version) for x in k]
            if f in POSITIONAL:
                ref = [f"{i}:{t}" for i, t in enumerate(ref)]
            assert rendered[f] == ref


@pytest.mark.parametrize("version", OPENS_VERSIONS)
def test_a_batch_writes_positions_of_any_number_of_digits(version):
    long = np.arange(1234, dtype=np.uint64) * np.uint64(2**52 + 3)
    keys = [{POSITIONAL_FIELD: long, "winnow": long[:3]}, {POSITIONAL_FIELD: long[:1]}]
    got = render_batch(keys, version)
    assert got[0][POSITIONAL_FIELD][1233] == f"1233:{keyword(int(long[1233]), version)}"
    assert got == [{f: render_keys(f, a, version) for f, a in doc.items()} for doc in keys]
