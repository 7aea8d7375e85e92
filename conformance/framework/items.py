"""Which pytest items are specs, the clause ids they cite, and their area (shared by the
plugin, its Allure labels and the run's bookkeeping)."""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path

import pytest

from . import registry

#: the folder of the spec modules (package data of an installed wheel, or the checkout's)
SPEC_DIR = Path(str(importlib.resources.files("mdlri_conformance.conformance.specs")))


#: how a spec's node id starts in every record of a run (results.jsonl, collected.json)
SPEC_PREFIX = "conformance/specs/"


@functools.lru_cache(maxsize=None)
def _spec_file(rootpath: str, path: str) -> str | None:
    """The spec file a node id's path names (relative to SPEC_DIR), None when it is none."""
    spec_dir = SPEC_DIR.resolve()
    here = (Path(rootpath) / path).resolve()
    # a file under this rootdir is the one meant; else the id is relative to another
    # rootdir (an xdist worker's under pytest --pyargs): the specs folder or one above it
    for full in [here] if here.is_file() else [(base / path).resolve() for base in
                                               (spec_dir, *spec_dir.parents)]:
        if spec_dir in full.parents and full.is_file():
            return full.relative_to(spec_dir).as_posix()
    return None


def spec_nodeid(rootpath: Path | str, nodeid: str) -> str | None:
    """A spec's node id as ``mdlri-conformance run`` names it (``conformance/specs/<file>::
    <rest>``), whatever the rootdir of the pytest that collected it (``pytest --pyargs`` and
    its xdist workers have another one); None for a node id outside the specs folder."""
    path, sep, rest = nodeid.partition("::")
    rel = _spec_file(str(rootpath), path)
    return f"{SPEC_PREFIX}{rel}{sep}{rest}" if rel else None


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
