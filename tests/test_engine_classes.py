"""Engine classes implement the protocol; they are not walls of one-line forwards
(ARCHITECTURE.md, "Engines implement the protocol; they do not forward it").

A forward is a method of the class whose body (its docstring aside) is one statement handing
the call or the attribute to a part: ``return self.part.method(...)``,
``self.part.method(...)``, ``return self.part.attr`` or ``self.part.attr = value``. The
classes are read with :mod:`ast`, nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import neardup
from neardup.engines.elastic.engine import ElasticEngine
from neardup.engines.embedded import EmbeddedEngine

ROOT = Path(neardup.__file__).resolve().parent
ENGINES = {
    "ElasticEngine": ROOT / "engines" / "elastic" / "engine.py",
    "EmbeddedEngine": ROOT / "engines" / "embedded" / "engine.py",
}
MOST_FORWARDS = 10


def _through_a_part(node: ast.expr) -> bool:
    """Whether ``node`` is ``self.part.x...`` or a call of one."""
    if isinstance(node, ast.Call):
        node = node.func
    depth = 0
    while isinstance(node, ast.Attribute):
        node, depth = node.value, depth + 1
    return isinstance(node, ast.Name) and node.id == "self" and depth >= 2


def forwards(source: str, name: str) -> list[str]:
    """The methods of class ``name`` in ``source`` that are a single forwarding statement
    (a property setter as ``name=``)."""
    cls = next(
        n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == name
    )
    out = []
    for f in cls.body:
        if not isinstance(f, ast.FunctionDef):
            continue
        body = [
            s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if len(body) != 1:
            continue
        s = body[0]
        if isinstance(s, (ast.Return, ast.Expr)) and s.value and _through_a_part(s.value):
            out.append(f.name)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and _through_a_part(s.targets[0]):
            out.append(f"{f.name}=")
    return out


def test_forwards_are_told_apart():
    source = '''
class E:
    def a(self):
        """doc"""
        return self.part.a()
    def b(self, v):
        self.part.b = v
    def c(self):
        return self.own
    def d(self):
        x = self.part.d()
        return x
    def e(self):
        return len(self.part.e)
'''
    assert forwards(source, "E") == ["a", "b="]


def test_no_engine_class_is_a_wall_of_forwards():
    found = {
        name: forwards(path.read_text(encoding="utf-8"), name) for name, path in ENGINES.items()
    }
    over = {name: f for name, f in found.items() if len(f) > MOST_FORWARDS}
    assert not over, f"more than {MOST_FORWARDS} single-statement forwards: {over}"


def _embedded() -> EmbeddedEngine:
    return EmbeddedEngine(":memory:")


def _elastic() -> ElasticEngine:
    return ElasticEngine("http://localhost:9200", "docs")  # (nothing is sent when made)


@pytest.mark.parametrize(
    ("make", "name", "where"),
    [
        (_embedded, "commit_every", "engine.connection.commit_every"),
        (_elastic, "paging", "engine.remote.paging"),
        (_elastic, "lease_times", "engine.remote.lease_times"),
        (_elastic, "index_setup", "engine.remote.index_setup"),
    ],
)
def test_a_setting_its_part_holds_cannot_be_set_on_the_engine(make, name, where):
    """Set on the engine, a setting its part holds would be silently unused: it is refused,
    naming the part."""
    engine = make()
    before = dict(vars(engine))
    with pytest.raises(AttributeError, match=re.escape(where)):
        setattr(engine, name, None)
    assert vars(engine) == before


@pytest.mark.parametrize("make", [_embedded, _elastic])
def test_an_engine_sets_only_what_it_declares(make):
    engine = make()
    with pytest.raises(AttributeError, match="holds no 'serach_ready'"):
        engine.serach_ready = True  # a misspelt name
    engine.on_wait = print  # what it declares is set as before
    assert engine.on_wait is print
