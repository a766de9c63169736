"""One rule for index names (Elasticsearch's documented one), used by the engine and the
dashboards alike, and one name for the clusters index."""

from __future__ import annotations

import pytest

from neardup.dashboards.saved_objects import saved_objects
from neardup.dashboards.fields import DashboardError
from neardup.engines.base import EngineError
from neardup.engines.elastic.templates import clusters_index, index_name_problem
from neardup.engines.elastic import ElasticEngine

GOOD = ["neardup", "docs-2024", "a_b", "x.y", "é"]
BAD = [
    "",
    ".",
    "..",
    "Docs",
    "a b",
    "a,b",
    "a#b",
    "a:b",
    "a/b",
    "a\\b",
    "a*b",
    "a?b",
    'a"b',
    "a<b",
    "a>b",
    "a|b",
    "-a",
    "_a",
    "+a",
    "x" * 250,
]


@pytest.mark.parametrize("name", GOOD + BAD)
def test_the_engine_and_the_dashboards_accept_the_same_names(name):
    ok = index_name_problem(name) is None
    assert ok == (name in GOOD)
    if ok:
        ElasticEngine("http://127.0.0.1:9", index=name)
        assert any(
            o.get("attributes", {}).get("title") == clusters_index(name)
            for o in saved_objects(name)
        )
    else:
        with pytest.raises(EngineError, match="invalid index name"):
            ElasticEngine("http://127.0.0.1:9", index=name)
        with pytest.raises(DashboardError, match="not a valid"):
            saved_objects(name)
