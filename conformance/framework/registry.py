"""The clause registry: every id of the behaviour catalog, as data (clauses.toml).

A clause has a group (CAP, LIST, ...), a level and a source reference:

* ``documented`` - the CANN docs state it; a divergence is a conformance FAIL.
* ``implementation`` - only the implementation shows it; a divergence is CHANGED.
* ``undefined`` - an open question (Q-xx); the suite records the observed behaviour.

A spec's level follows from the clauses it cites: the strictest of them (documented over
implementation over undefined), so a documented clause is never hidden behind an
implementation-level one in the same spec.
"""

from __future__ import annotations

import importlib.resources

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

#: the package's data folder (an installed wheel or the checkout)
_HERE = Path(str(importlib.resources.files("mdlri_conformance.conformance")))
DATA = _HERE / "clauses.toml"
#: further clause files read after DATA (``clauses-*.toml`` beside it), ids must not repeat
EXTRA_GLOB = "clauses-*.toml"
#: clause ids that cannot be tested through the public API, each with a one-line reason
UNTESTABLE = _HERE / "untestable.toml"

LEVELS = ("documented", "implementation", "undefined")
_RANK = {lvl: i for i, lvl in enumerate(LEVELS)}

#: the API area a clause group belongs to, for per-area summaries
GROUP_AREA = {
    "CAP": "capture", "MODE": "capture", "STAT": "capture", "XS": "capture",
    "LIST": "listing", "TYPE": "listing", "SEQ": "seq-ids",
    "GETP": "params", "SETP": "params", "ATTR": "params",
    "DIS": "disable", "UPD": "update", "EXE": "execute", "ABT": "execute",
    "TMO": "timeouts", "LIFE": "lifecycle", "ERR": "errors",
    "TG": "task-groups", "BLD": "build", "COND": "conditional", "NAME": "names",
    "DBG": "debug", "FLD": "field", "RT": "runtime-support", "KRN": "kernels",
    "Q": "open-questions",
}


@dataclass(frozen=True)
class Clause:
    """One catalog entry."""

    id: str
    group: str
    level: str
    title: str
    src: str
    disagree: bool

    @property
    def area(self) -> str:
        return GROUP_AREA.get(self.group, self.group.lower())


@lru_cache(maxsize=1)
def clauses() -> dict[str, Clause]:
    """All clauses by id, in catalog order."""
    out: dict[str, Clause] = {}
    for path in [DATA, *sorted(DATA.parent.glob(EXTRA_GLOB))]:
        with path.open("rb") as fh:
            rows = tomllib.load(fh)["clause"]
        for r in rows:
            c = Clause(**r)
            if c.level not in LEVELS:
                raise ValueError(f"{path}: clause {c.id} has unknown level {c.level!r}")
            if c.id in out:
                raise ValueError(f"{path}: clause {c.id} is defined twice")
            out[c.id] = c
    return out


class UntestableError(ValueError):
    """untestable.toml is malformed or names ids the catalog does not have."""


def load_untestable(path: Path) -> dict[str, str]:
    """Parse an untestable file: ``[[reason]] id = "..." reason = "..."``, one row per id.

    Raises :class:`UntestableError` for an unknown id, a duplicate id, a missing or empty
    reason, a multi-line reason or an unexpected key.
    """
    try:
        with path.open("rb") as fh:
            rows = tomllib.load(fh).get("reason", [])
    except tomllib.TOMLDecodeError as exc:
        raise UntestableError(f"{path}: {exc}") from None
    known = clauses()
    out: dict[str, str] = {}
    problems: list[str] = []
    for n, r in enumerate(rows, 1):
        cid, why = r.get("id"), r.get("reason")
        extra = sorted(set(r) - {"id", "reason"})
        if extra:
            problems.append(f"row {n}: unexpected key(s) {', '.join(extra)}")
        if not isinstance(cid, str) or cid not in known:
            problems.append(f"row {n}: unknown clause id {cid!r}")
            continue
        if not isinstance(why, str) or not why.strip() or "\n" in why.strip():
            problems.append(f"row {n} ({cid}): the reason must be one non-empty line")
            continue
        if cid in out:
            problems.append(f"row {n}: {cid} listed twice")
            continue
        out[cid] = why.strip()
    if problems:
        raise UntestableError(f"{path}: " + "; ".join(problems))
    return out


@lru_cache(maxsize=1)
def untestable() -> dict[str, str]:
    """The reasoned clause ids (untestable.toml): id -> one-line reason, in file order."""
    return load_untestable(UNTESTABLE) if UNTESTABLE.is_file() else {}


def reasoned_and_cited(cited: Iterable[str]) -> list[str]:
    """Ids both cited by a spec and listed as untestable (allowed; reported in summaries)."""
    cited_set = set(cited)
    return [i for i in untestable() if i in cited_set]


def get(cid: str) -> Clause:
    """Look a clause up; KeyError for an unknown id."""
    return clauses()[cid]


def unknown(ids: Iterable[str]) -> list[str]:
    """The ids that are not in the catalog."""
    known = clauses()
    return [i for i in ids if i not in known]


def level_of(ids: Iterable[str]) -> str:
    """The spec level that follows from the cited clauses (the strictest)."""
    levels = [get(i).level for i in ids]
    if not levels:
        raise ValueError("a spec must cite at least one clause")
    return min(levels, key=_RANK.__getitem__)
