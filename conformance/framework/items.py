"""Which pytest items are specs, the clause ids they cite, and their area (shared by the
plugin, its Allure labels and the run's bookkeeping)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

from . import registry

#: the folder of the spec modules (package data of an installed wheel, or the checkout's)
SPEC_DIR = Path(str(importlib.resources.files("mdlri_conformance.conformance.specs")))


def clause_ids(item: pytest.Item) -> tuple[str, ...]:
    """The clause ids of an item's ``clause`` markers, in order, each once."""
    ids: list[str] = []
    for m in item.iter_markers("clause"):
        ids.extend(m.args)
    return tuple(dict.fromkeys(ids))


def is_spec(item: pytest.Item) -> bool:
    """A spec is any test under the specs folder, or any test carrying a clause marker."""
    return SPEC_DIR in Path(str(item.fspath)).parents or item.get_closest_marker("clause") is not None


def area_of(item: pytest.Item, ids: tuple[str, ...]) -> str:
    """The spec's area: its module's name without ``test_`` (else its first clause's group)."""
    stem = Path(str(item.fspath)).stem
    if stem.startswith("test_"):
        return stem[len("test_"):]
    return registry.get(ids[0]).area if ids else "other"


def bad_expression(expr: str) -> str | None:
    """Why a -k expression does not parse (pytest's own parser), None when it does; checked
    before a run starts because a worker that meets it after collection takes the run down."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # pytest moved it: pytest reports it itself
        return None
    try:
        Expression.compile(expr)
    except Exception as exc:  # noqa: BLE001 - ParseError (pytest 8) or SyntaxError (pytest 9)
        text = str(exc).strip().splitlines()
        return text[0] if text else type(exc).__name__
    return None
