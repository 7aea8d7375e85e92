"""One direction between layers, and no import cycle anywhere in the package.

The import graph is built statically: every ``.py`` of the package's folders is parsed with
:mod:`ast`, every ``import`` counts (also one inside a function), relative imports are
resolved against the importing module, and ``from X import name`` is an edge to ``X.name``
when that is a module of the package, else to ``X``. The layers, top to bottom (an import
only goes downward):

1. ``conformance/cli/`` (the command line) may import anything;
2. the content: ``conformance/harness.py``, ``conformance/expect.py``, ``conformance/specs/``,
   ``conformance/scenarios/``, the engine (``conformance/engine/``); the engine never imports
   specs, harness or scenarios;
3. the framework, ``conformance/framework/``: never imports the content. Inside it, the run
   (the modules of ``framework/`` itself: the pytest plugin, its job modules, isolation,
   probes, and the records every part reads, :data:`RUN_RECORDS`) and three sub-packages:
   ``verdicts/`` imports of the run only its records, and never ``fleet/`` or ``power/``;
   ``fleet/`` imports of the run only its records; ``power/`` never imports ``fleet/``; the
   run never imports ``power/``, and of ``fleet/`` only ``shard`` (the split it selects);
4. ``reports/`` (imports nothing of the package), ``backends/`` (only ``backends/`` and
   ``kernel/``), ``kernel/`` (only ``kernel/``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "mdlri_conformance"
#: the package's folders (pyproject.toml's package-dir): mdlri_conformance.<name> is <name>/
FOLDERS = ("backends", "conformance", "kernel", "reports")

P = PACKAGE + "."
CLI = P + "conformance.cli"
FRAMEWORK = P + "conformance.framework"
#: the framework's sub-packages: what is judged and written, the fleet, the suite's own power
VERDICTS = FRAMEWORK + ".verdicts"
FLEET = FRAMEWORK + ".fleet"
POWER = FRAMEWORK + ".power"
#: the run's records: what verdicts/ and fleet/ may read of the run (never its hooks,
#: processes or probes)
RUN_RECORDS = tuple(f"{FRAMEWORK}.{m}" for m in (
    "registry", "items", "keys", "rundir", "outcomes", "global_state", "leaks", "crashdump",
    "backend_loader"))
#: the one fleet module the run imports: the plugin selects its shard's items
RUN_FLEET = (FLEET + ".shard",)
REPORTS = P + "reports"
BACKENDS = P + "backends"
KERNEL = P + "kernel"
#: the generated engine: the package conformance/engine/
ENGINE = (P + "conformance.engine",)
#: what the engine must not import (the content above it)
SPECS_SIDE = (P + "conformance.harness", P + "conformance.specs", P + "conformance.scenarios")
CONTENT = (P + "conformance.expect",) + SPECS_SIDE + ENGINE


def _within(module: str, prefixes: tuple[str, ...] | str) -> bool:
    """Whether ``module`` is one of ``prefixes`` or inside one of them."""
    if isinstance(prefixes, str):
        prefixes = (prefixes,)
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# ---------------------------------------------------------------------------------------------
# the graph


def module_files(root: Path, folders: tuple[str, ...] = FOLDERS,
                 package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, whether it is a package's ``__init__``) for every ``.py``."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            init = parts[-1] == "__init__"
            name = ".".join((package,) + (parts[:-1] if init else parts))
            out[name] = (path, init)
    return out


def _resolve(module: str, is_init: bool, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target>`` written in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_init:
        base = base[:-1]  # a module's relative imports start from its package
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _known(name: str, modules: set[str]) -> str | None:
    """``name`` or its nearest enclosing module of the package (None: not the package's)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its file)."""
    names = set(modules)
    graph: dict[str, set[str]] = {}
    for module, (path, is_init) in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_init, node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base
                           for a in node.names]
            else:
                continue
            for t in targets:
                found = _known(t, names)
                if found is not None and found != module:
                    edges.add(found)
        graph[module] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles (``[a, b, ..., a]``): in each strongly connected component, the
    shortest cycle through each of its modules (each set of modules once)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles: list[list[str]] = []
    for comp in components:
        members = set(comp)
        if len(comp) == 1 and comp[0] not in graph.get(comp[0], ()):
            continue
        seen: list[set[str]] = []
        for start in sorted(comp):  # each distinct cycle through the component, shortest first
            cycle = _path_back(graph, start, members)
            if set(cycle) not in seen:
                seen.append(set(cycle))
                cycles.append(cycle)
    return cycles


def _path_back(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """The shortest import path from ``start`` back to itself inside one component."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return [start, start]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes against the layer direction, one line each."""
    out = []
    for module, targets in sorted(graph.items()):
        for t in sorted(targets):
            why = _forbidden(module, t)
            if why:
                out.append(f"{module} imports {t}: {why}")
    return out


def _forbidden(module: str, target: str) -> str | None:
    if _within(module, REPORTS) and not _within(target, REPORTS):
        return "reports/ is a leaf (plain data in, text out)"
    if _within(module, BACKENDS) and not _within(target, (BACKENDS, KERNEL)):
        return "backends/ imports only backends/ and kernel/"
    if _within(module, KERNEL) and not _within(target, KERNEL):
        return "kernel/ imports only kernel/"
    if _within(module, FRAMEWORK) and _within(target, CONTENT + (CLI,)):
        return "the framework never imports the content (harness, expect, specs, scenarios, engine)"
    if _within(module, FRAMEWORK):
        why = _framework_forbidden(module, target)
        if why:
            return why
    if _within(module, ENGINE) and _within(target, SPECS_SIDE + (CLI,)):
        return "the engine never imports specs, harness or scenarios"
    if _within(module, CONTENT) and _within(target, CLI):
        return "only the command line imports the command line"
    return None


def _is_run(module: str) -> bool:
    """A module of the run: ``framework/`` itself, outside its sub-packages."""
    return _within(module, FRAMEWORK) and not _within(module, (VERDICTS, FLEET, POWER))


def _framework_forbidden(module: str, target: str) -> str | None:
    """The direction between the run and the framework's sub-packages."""
    if _within(module, VERDICTS):
        if _within(target, (FLEET, POWER)):
            return "verdicts/ judge what a run recorded: never the fleet or the power tools"
        if _is_run(target) and not _within(target, RUN_RECORDS):
            return "verdicts/ read only the run's records, never its hooks, processes or probes"
    if _within(module, FLEET) and _is_run(target) and not _within(target, RUN_RECORDS):
        return "fleet/ reads only the run's records, never its hooks, processes or probes"
    if _within(module, POWER) and _within(target, FLEET):
        return "power/ runs the suite whole: it never imports the fleet"
    if _is_run(module):
        if _within(target, POWER):
            return "the run never imports power/ (a spec runs the same whether measured or not)"
        if _within(target, FLEET) and not _within(target, RUN_FLEET):
            return "of fleet/ the run imports only shard (the split it selects)"
    return None


# ---------------------------------------------------------------------------------------------
# the package


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(module_files(ROOT))


def test_the_graph_sees_the_package(graph: dict[str, set[str]]) -> None:
    """A sanity check of the graph itself: known edges, function-level ones included."""
    assert P + "conformance.framework.plugin" in graph
    assert P + "conformance.expect" in graph[P + "conformance.harness"]
    assert P + "conformance.framework.outcomes" in graph[P + "conformance.expect"]
    # a function-level import (the cli imports the merge command where it is used)
    assert P + "conformance.framework.fleet.merge" in graph[CLI]
    # every sub-package of the framework is seen
    for sub in (VERDICTS, FLEET, POWER):
        assert any(_within(m, sub) and m != sub for m in graph), sub


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    cycles = find_cycles(graph)
    assert not cycles, "import cycles:\n  " + "\n  ".join(" -> ".join(c) for c in cycles)


def test_imports_go_down_the_layers(graph: dict[str, set[str]]) -> None:
    bad = layer_violations(graph)
    assert not bad, "imports against the layer direction:\n  " + "\n  ".join(bad)


# ---------------------------------------------------------------------------------------------
# the checker can fail


def test_a_cycle_is_found_and_named() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(find_cycles(g)) == [["a", "b", "c", "a"], ["e", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module, target", [
    (P + "reports.html", P + "conformance.framework.verdicts.summary"),
    (P + "backends.sim.backend", P + "conformance.framework.probe"),
    (P + "kernel.catalog", P + "backends.contract"),
    (P + "conformance.framework.plugin", P + "conformance.harness"),
    (P + "conformance.framework.probe", P + "conformance.expect"),
    (P + "conformance.framework.items", P + "conformance.engine.graphs"),
    (P + "conformance.engine.runner", P + "conformance.specs.test_generated"),
    (P + "conformance.engine.oracle", P + "conformance.harness"),
    (P + "conformance.harness", CLI),
    (VERDICTS + ".summary", POWER + ".killmatrix"),
    (VERDICTS + ".summary", FLEET + ".shard"),
    (VERDICTS + ".artefacts", FRAMEWORK + ".isolation"),
    (FLEET + ".merge", FRAMEWORK + ".plugin"),
    (POWER + ".killmatrix", FLEET + ".merge"),
    (FRAMEWORK + ".plugin", POWER + ".mutants"),
    (FRAMEWORK + ".reporting", FLEET + ".merge"),
])
def test_an_upward_import_is_refused(module: str, target: str) -> None:
    assert layer_violations({module: {target}, target: set()}) != []


@pytest.mark.parametrize("module, target", [
    (CLI, P + "conformance.specs.test_generated"),
    (P + "conformance.harness", P + "conformance.framework.probe"),
    (P + "conformance.engine.runner", P + "conformance.framework.outcomes"),
    (P + "conformance.framework.verdicts.artefacts", P + "reports.write"),
    (P + "backends.sim.backend", P + "kernel.catalog"),
    (FRAMEWORK + ".plugin", FLEET + ".shard"),
    (FRAMEWORK + ".reporting", VERDICTS + ".summary"),
    (FLEET + ".merge", POWER + ".killmatrix"),
    (FLEET + ".shard", FRAMEWORK + ".items"),
    (POWER + ".killmatrix", VERDICTS + ".artefacts"),
    (POWER + ".fuzz_session", FRAMEWORK + ".backend_session"),
    (VERDICTS + ".known", FRAMEWORK + ".registry"),
])
def test_a_downward_import_is_allowed(module: str, target: str) -> None:
    assert layer_violations({module: {target}, target: set()}) == []


def test_relative_and_function_level_imports_are_resolved(tmp_path: Path) -> None:
    pkg = tmp_path / "top" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .b import thing\n    from .. import c\n")
    (pkg / "b.py").write_text("import pkg.top.c as c\nthing = 1\n")
    (tmp_path / "top" / "c.py").write_text("from .sub import a\n")
    g = import_graph(module_files(tmp_path, ("top",), "pkg"))
    assert g["pkg.top.sub"] == {"pkg.top.sub.a"}
    assert g["pkg.top.sub.a"] == {"pkg.top.sub.b", "pkg.top.c"}
    assert g["pkg.top.sub.b"] == {"pkg.top.c"}
    assert find_cycles(g) == [["pkg.top.c", "pkg.top.sub.a", "pkg.top.c"],
                              ["pkg.top.sub.b", "pkg.top.c", "pkg.top.sub.a", "pkg.top.sub.b"]]
