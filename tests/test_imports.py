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
#: ones only. Each name is a folder (a package directly below ``neardup``) or a module of the
#: package root, so a file's folder tells its layer: every module of a folder is in the
#: folder's layer.
LAYERS = (
    ("primitives", {"errors", "runtime"}),
    ("sketches", {"sketches"}),
    ("keys", {"keys"}),
    ("settings", {"config"}),
    ("text", {"canonical"}),
    ("signing", {"signing"}),
    ("storage", {"engines"}),
    ("core", {"matching", "indexing", "comparison", "io", "api"}),
    ("applications", {"evaluation", "report", "dashboards", "cli"}),
)


def layer_of(module: str) -> int | None:
    """The layer of ``module``: the layer of its folder (or of itself, in the package root)."""
    if module == PKG:
        return len(LAYERS)  # the facade re-exports from every layer
    top = module.split(".")[1]
    return next((i for i, (_, names) in enumerate(LAYERS) if top in names), None)


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


def test_layer_of_is_the_folders_layer():
    assert LAYERS[layer_of("neardup.sketches.minhash")][0] == "sketches"
    assert LAYERS[layer_of("neardup.engines.elastic.dsl")][0] == "storage"
    assert LAYERS[layer_of("neardup.api")][0] == "core"
    assert layer_of("neardup.no_such_module") is None


def test_the_layers_name_folders_only():
    """One way: each name of :data:`LAYERS` is a whole folder or a root module (no module
    of a folder has a layer of its own), and is named once."""
    modules = module_names()
    names = [name for _, layer in LAYERS for name in layer]
    assert len(names) == len(set(names))
    for name in names:
        assert "." not in name, f"{name}: a layer names whole folders, not one module of one"
        assert f"{PKG}.{name}" in modules, f"LAYERS names {name}, which is not a module"


def test_every_folder_has_a_layer():
    """The other way: every folder and root module of the package is in a layer."""
    tops = {m.split(".")[1] for m in module_names() if m != PKG}
    named = {name for _, layer in LAYERS for name in layer}
    assert tops == named, f"folders without a layer: {sorted(tops - named)}"


def test_architecture_shows_the_layers():
    """ARCHITECTURE.md's layer table lists the same folders in the same layers."""
    text = (Path(__file__).resolve().parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) (\w+) \| (.*) \|$", text, flags=re.M)
    table = [
        (name, {w.strip(" /`") for w in re.sub(r"\([^)]*\)", "", cells).split(",")})
        for _, name, cells in rows
        if name != "facade"
    ]
    assert table == [(name, set(names)) for name, names in LAYERS]


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
