"""Engine classes implement the protocol; they are not walls of one-line forwards
(ARCHITECTURE.md, "Engines implement the protocol; they do not forward it").

A forward is a method of the class whose body (its docstring aside) is one statement handing
the call or the attribute to a part: ``return self.part.method(...)``,
``self.part.method(...)``, ``return self.part.attr`` or ``self.part.attr = value``. The
classes are read with :mod:`ast`, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import neardup

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
