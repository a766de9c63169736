"""The modules of neardup import each other without cycles, counting imports inside
functions too (a lazy import that closes a cycle only hides it until the day someone
moves it to the top).

Each module's imports are read with :mod:`ast`, nothing is imported. An edge A -> B means
that importing A may import B: B is named in an ``import`` or ``from ... import`` of A
(a submodule when the imported name is one, else the module or package named), and
importing ``neardup.x.y`` also runs the ``__init__`` of the package ``neardup.x`` (unless
the importer is inside that package: then it has already started). The top-level
``neardup/__init__`` (the public facade, which imports the API) is left out of those
implicit edges; a module that names it explicitly gets the edge.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import neardup

ROOT = Path(neardup.__file__).resolve().parent
PKG = "neardup"


def module_names() -> dict[str, Path]:
    """Dotted name -> file of every module of the package (packages by their ``__init__``)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (PKG, *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` inside ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that importing ``module`` may import (see the module docstring)."""
    is_package = path.name == "__init__.py"
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                named.add(sub if sub in modules else base)
    own = module.split(".") if is_package else module.split(".")[:-1]
    ancestors = {
        ".".join(own[:k]) for k in range(1, len(own) + 1)
    }  # already initialized when ``module`` runs
    out = set()
    for name in named:
        if name != PKG and not name.startswith(PKG + "."):
            continue
        out.add(name)
        parts = name.split(".")
        out.update(
            ".".join(parts[:k]) for k in range(2, len(parts))
        )  # intermediate packages' __init__
    out -= ancestors - named
    out.discard(module)
    return {m for m in out if m in modules}


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


#: The layers of ARCHITECTURE.md, lowest first: a module imports its own layer and lower
#: ones only. A name is a module or a package (dotted below ``neardup``); a package covers
#: its modules, and a module named on its own (``signing.registry``) has its own layer.
LAYERS = (
    (
        "primitives",
        {
            "errors",
            "runtime",
            "report.charts",
            "signing.validate",
        },
    ),
    (
        "sketches",
        {"sketches", "keys"},
    ),
    ("settings", {"config"}),
    ("text", {"canonical"}),
    ("signing", {"signing"}),
    ("storage", {"engines"}),
    (
        "core",
        {"matching", "indexing", "comparison", "io.records", "api"},
    ),
    ("applications", {"io", "evaluation", "report", "dashboards", "cli"}),
)


def layer_of(module: str) -> int | None:
    """The layer of the longest name of :data:`LAYERS` that is ``module`` or a package of it."""
    if module == PKG:
        return len(LAYERS)  # the facade re-exports from every layer
    parts = module.split(".")[1:]
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        found = next((i for i, (_, names) in enumerate(LAYERS) if name in names), None)
        if found is not None:
            return found
    return None


def runs_nothing(module: str, graph: dict[str, set[str]], modules: dict[str, Path]) -> bool:
    """A package whose ``__init__`` imports nothing of neardup: importing a module inside it
    runs that ``__init__``, which reaches no layer."""
    return modules[module].name == "__init__.py" and not graph[module]


def test_the_graph_is_read_from_every_module():
    graph = import_graph()
    assert {
        "neardup.config",
        "neardup.canonical",
        "neardup.signing.signer",
        "neardup.engines.base",
    } <= set(graph)
    assert "neardup.config" in graph["neardup.canonical.canonicalizer"]
    assert "neardup.sketches.lsh" in graph["neardup.config"]  # an import inside a function counts
    assert {"neardup.engines", "neardup.engines.base"} <= graph[
        "neardup.report.html"
    ]  # the package's __init__ runs first
    assert (
        "neardup.engines" not in graph["neardup.engines.base"]
    )  # ... and has started when its own modules run


def test_layer_of_takes_the_longest_name():
    assert LAYERS[layer_of("neardup.sketches.minhash")][0] == "sketches"
    assert layer_of("neardup.no_such_module") is None
    dotted = [(i, n) for i, (_, names) in enumerate(LAYERS) for n in names if "." in n]
    for i, name in dotted:  # a module named on its own is not in its package's layer
        assert layer_of(f"{PKG}.{name}") == i
        assert layer_of(f"{PKG}.{name}") != layer_of(f"{PKG}.{name.split('.')[0]}")


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_module_has_a_layer():
    missing = sorted(m for m in import_graph() if layer_of(m) is None)
    assert not missing, (
        f"put {missing} into LAYERS here and into the layer table of ARCHITECTURE.md"
    )


def test_every_name_of_the_layers_is_a_module():
    modules = module_names()
    unknown = sorted(
        name for _, names in LAYERS for name in names if f"{PKG}.{name}" not in modules
    )
    assert not unknown, f"LAYERS names {unknown}, which are not modules of neardup"


def test_lower_layers_never_import_higher_ones():
    graph, modules = import_graph(), module_names()
    up = sorted(
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a, bs in graph.items()
        if a != PKG
        for b in bs
        if None not in (layer_of(a), layer_of(b))
        and layer_of(b) > layer_of(a)
        and not runs_nothing(b, graph, modules)
    )
    assert not up, "\n".join(up)


def test_architecture_names_every_module():
    text = (Path(__file__).resolve().parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    unnamed = sorted(
        m for m in import_graph() if m != PKG and not re.search(rf"\b{m.rsplit('.', 1)[1]}\b", text)
    )
    assert not unnamed, f"ARCHITECTURE.md does not mention {unnamed}"
