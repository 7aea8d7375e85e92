"""The spec markers ``clause(*ids)`` (required on every spec) and ``requires(*caps)``, and
the collection check that every spec cites known clauses."""

from __future__ import annotations

import pytest

from . import registry
from .items import clause_ids, is_spec


def register(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(*ids): the catalog clause ids a spec checks")
    config.addinivalue_line("markers", "requires(*caps): backend capabilities a spec needs")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    problems: list[str] = []
    for item in items:
        if not is_spec(item):
            continue
        ids = clause_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: no clause marker")
            continue
        bad = registry.unknown(ids)
        if bad:
            problems.append(f"{item.nodeid}: unknown clause id(s) {', '.join(bad)}")
    if problems:
        raise pytest.UsageError("specs citing unknown or no clauses:\n  " + "\n  ".join(problems))
