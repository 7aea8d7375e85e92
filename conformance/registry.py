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

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

DATA = Path(__file__).with_name("clauses.toml")

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
    "DBG": "debug", "Q": "open-questions",
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
    with DATA.open("rb") as fh:
        rows = tomllib.load(fh)["clause"]
    out: dict[str, Clause] = {}
    for r in rows:
        c = Clause(**r)
        if c.level not in LEVELS:
            raise ValueError(f"{DATA}: clause {c.id} has unknown level {c.level!r}")
        out[c.id] = c
    return out


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
