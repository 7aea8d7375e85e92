"""Which spec executes which simulator line: the coverage map of ``mdlri-conformance mutate``.

A pytest plugin, loaded by name through ``PYTEST_PLUGINS`` (so a spec's own-process child
loads it too), that records line coverage of one source folder with one coverage.py *dynamic
context per spec*: the spec's node id while its setup, call and teardown run, the empty context
elsewhere (imports, capability probes, the suite's state and leak readings between phases). It is idle unless ``MDLRI_MUTATE_COVERAGE``
names the data file; each process writes its own ``<file>.<suffix>`` and
:func:`line_map` combines them.

:func:`line_map` turns the data into ``{file: {line: {node ids}}}``; a line executed only
outside every spec (the empty context: module import, class bodies, probes, the suite's
bookkeeping) maps to :data:`IMPORT_TIME`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

#: environment: the coverage data file (the plugin is idle without it)
ENV_DATA = "MDLRI_MUTATE_COVERAGE"
#: environment: the folder whose files are measured
ENV_SOURCE = "MDLRI_MUTATE_SOURCE"
#: the map's context for a line no spec executed while running, executed all the same
IMPORT_TIME = "<import>"

_cov: Any = None


def _start() -> None:
    """Start measuring at plugin import (before the backend is loaded) when asked to."""
    global _cov
    data = os.environ.get(ENV_DATA)
    if not data or _cov is not None:
        return
    import coverage
    _cov = coverage.Coverage(data_file=data, data_suffix=True, config_file=False,
                             source=[os.environ.get(ENV_SOURCE, ".")], branch=False)
    _cov.start()


_start()


def _phase(item: pytest.Item) -> Iterator[None]:
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    try:
        yield
    finally:
        if _cov is not None:
            _cov.switch_context("")


# Innermost (trylast) around each phase: the fixtures and the spec body count for the spec;
# the suite's own bookkeeping between phases (state readings, leak snapshots) does not.
@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield from _phase(item)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _cov
    if _cov is not None:
        _cov.stop()
        _cov.save()
        _cov = None


def line_map(data_file: Path, root: Path) -> dict[str, dict[int, set[str]]]:
    """Combine the per-process data files of ``data_file`` and map each measured file under
    ``root`` (by its path relative to ``root``) to ``{line: {node ids}}``."""
    import coverage
    cov = coverage.Coverage(data_file=str(data_file), config_file=False)
    cov.combine(data_paths=[str(data_file.parent)], keep=True)
    data = cov.get_data()
    out: dict[str, dict[int, set[str]]] = {}
    root = root.resolve()
    for fname in data.measured_files():
        path = Path(fname).resolve()
        if root not in path.parents:
            continue
        lines: dict[int, set[str]] = {}
        for line, contexts in (data.contexts_by_lineno(fname) or {}).items():
            specs = {c for c in contexts if c}
            lines[line] = specs or {IMPORT_TIME}
        out[path.relative_to(root).as_posix()] = lines
    return out


__all__ = ["ENV_DATA", "ENV_SOURCE", "IMPORT_TIME", "line_map"]
