"""The serializer neardup gives opensearch-py (orjson) writes request bodies the engine reads
as the client's own serializer writes them: the same JSON values, for any JSON-like value,
numpy values, and neardup's own ``_bulk`` actions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opensearchpy.exceptions import SerializationError
from opensearchpy.serializer import JSONSerializer

from neardup.engines.serializer import OrjsonSerializer

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text() | st.integers(0, 9), inner, max_size=4)
    ),
    max_leaves=20,
)


def _same(value) -> None:
    ours, theirs = OrjsonSerializer().dumps(value), JSONSerializer().dumps(value)
    assert isinstance(ours, str)
    assert json.loads(ours) == json.loads(theirs)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_bodies_read_back_as_the_clients_own(value):
    _same({"body": value})  # (a body is an object; text is sent as it is, by both)


def test_numpy_values_and_text_as_the_clients_own():
    _same({"a": np.arange(3, dtype=np.uint64), "b": np.float32(0.5), "c": np.int64(-7)})
    _same({"n": np.bool_(True), "u": np.uint64(2**64 - 1), "t": "ставка\u200c"})
    assert OrjsonSerializer().dumps('{"given":"as text"}') == '{"given":"as text"}'


def test_what_neither_writes_is_refused_as_the_client_refuses_it():
    with pytest.raises(SerializationError):
        OrjsonSerializer().dumps({"x": object()})


def test_neardup_actions_read_back_as_the_clients_own():
    from neardup import Config, Document
    from neardup.engines.base import Tags
    from neardup.engines.elastic import dsl
    from neardup.signing.signer import Signer

    signer = Signer(Config())
    docs = [
        Document("a", "the river runs past the old mill " * 8, title="Mill", lang="en"),
        Document("b", "Река течёт мимо старой мельницы " * 8, fields={"n": 3}),
    ]
    tags = Tags(cluster_id="a", dup_of="a", max_resemblance=0.9, is_duplicate=True)
    for s in signer.sign_batch(docs):
        _same(dsl.index_action("docs", s, tags, 7, "2026-01-01T00:00:00.000Z"))


def test_the_opensearch_client_is_given_it(osmem_clone):
    from neardup.engines.elastic import ElasticEngine

    from .conftest import http_pipeline

    eng = ElasticEngine.from_options(osmem_clone.url, index="ser", pipeline=http_pipeline())
    eng.remote.connect()
    try:
        assert isinstance(eng.remote.client.transport.serializer, OrjsonSerializer)
    finally:
        eng.remote.disconnect()
