"""A replay against the oracle: what can be judged, the difference, and its report.

:func:`judgeable` says which observations a backend with given capabilities can be judged on
(buffer and word contents only where it moves data, runs kernels and blocks on waits);
:func:`compare` reports the first difference between the oracle's observations and a
replay's (:mod:`conformance.engine.runner`), one at or after the first 207000 / 207019 answer
as unsupported (``Divergence.unsupported``), never as a divergence. :func:`divergence_message`
formats a :class:`Divergence` with the case JSON (saved by :func:`save_case`) and a command
that replays it without Hypothesis.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from mdlri_conformance.backends.contract import Cap

from .graphs import Case, Launch, ValueWait, Wait
from .observe import Difference, Observation, first_difference
from .steps import SetKernel

#: the command a divergence message tells to run
PROG = "mdlri-conformance"


def uses_kernels(case: Case) -> bool:
    """Whether the case launches (or sets) a kernel."""
    return any(isinstance(op, Launch) for op in case.ops) or \
        any(isinstance(s, SetKernel) for s in case.plan)


def uses_waits(case: Case) -> bool:
    """Whether the case orders work through event or value waits."""
    return any(isinstance(op, (Wait, ValueWait)) for op in case.ops)


def judgeable(caps: Iterable[Cap], case: Case,
              phases: tuple[str, ...] | None = None) -> Callable[[Observation], bool]:
    """Which observations a backend with ``caps`` can be judged on: the ``phases`` (all when
    None); buffer, word and pinned host buffer contents only with data movement, only when
    the waits that order the case's work really block (``Cap.BLOCKING_WAIT``, for cases with
    waits), and buffers and host buffers of a case with kernels only with kernel execution
    too; the NOP of an emptied stream only
    with ``Cap.INTERNAL_TASKS``. Return codes, listing and seq ids always."""
    have = set(caps)
    data = Cap.DATA_MOVEMENT in have and (Cap.BLOCKING_WAIT in have or not uses_waits(case))
    kernels = Cap.KERNEL_EXEC in have or not uses_kernels(case)

    def keep(o: Observation) -> bool:
        if phases is not None and o.phase not in phases:
            return False
        if o.what.endswith(" emptied") and Cap.INTERNAL_TASKS not in have:
            return False  # the NOP of an emptied stream is an internal task (DIS-07)
        if o.phase == "sync":
            return data and (kernels or o.what.startswith("word"))
        return True
    return keep


@dataclass
class Divergence:
    """A case whose replay differs from the oracle.

    ``unsupported`` (non-empty) says the difference lies at or after a call that answered
    207000 / 207019: the backend cannot run the rest of the case, which is not a divergence."""

    case: Case
    backend: str
    expected: list[Observation]
    observed: list[Observation]
    difference: Difference
    path: Path | None = None
    unsupported: str = ""


def compare(case: Case, backend_name: str, expected: list[Observation],
            observed: list[Observation],
            keep: Callable[[Observation], bool] | None = None) -> Divergence | None:
    """A :class:`Divergence` when the lists differ (both restricted to ``keep``), else None."""
    cut = getattr(observed, "unsupported_at", None)
    met = getattr(observed, "unsupported", "") or "a call returned a feature-not-supported code"
    if keep is not None:
        expected = [o for o in expected if keep(o)]
        if cut is not None:
            cut = sum(1 for o in observed[:cut] if keep(o))
        observed = [o for o in observed if keep(o)]
    diff = first_difference(expected, observed)
    if diff is None:
        return None
    div = Divergence(case, backend_name, expected, observed, diff)
    if cut is not None and diff.position >= cut:
        div.unsupported = met
    return div


def save_case(case: Case, directory: Path | str | None = None) -> Path:
    """Write the case JSON under ``directory``/cases (a temp dir when None); the file name is
    a hash of the content, so the same case is written once."""
    text = case.to_json()
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    base = Path(directory) if directory else Path(tempfile.gettempdir()) / "mdlri-cases"
    out = base / "cases" if directory else base
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{case.name or 'case'}-{digest}.json"
    path.write_text(text + "\n")
    return path


def divergence_message(div: Divergence, directory: Path | str | None = None,
                       write: bool = True) -> str:
    """The failure message: first difference, expected vs observed, the case JSON, and the
    replay command (the JSON is written first so the command works as printed)."""
    if write and div.path is None:
        div.path = save_case(div.case, directory)
    d = div.difference
    where = d.expected or d.observed
    path = _case_arg(div.path)
    lines = [
        f"generated case diverges from the oracle at observation {d.position}: {d.describe()}",
        f"  expected: {_show(d.expected)}",
        f"  observed: {_show(d.observed)}",
        f"  case ({div.case.task_count()} tasks, {div.case.streams} streams): "
        f"{div.case.to_json(indent=None)}",
        f"  replay: {PROG} replay {path} --backend {div.backend}",
    ]
    if where is not None and where.phase == "listing":
        lines.insert(3, "  (listing: op indices per user stream; "
                        "see conformance/engine/observe.py)")
    return "\n".join(lines)


def _case_arg(path: Path | str | None) -> str:
    """How ``replay`` is told the case: a kept case by its shipped name (works in a checkout
    and in an installed wheel alike), any other file by its path."""
    if path is None:
        return "CASE.json"
    p = Path(path)
    shipped = Path(str(importlib.resources.files("mdlri_conformance.conformance"))) / "cases"
    return p.stem if p.parent.resolve() == shipped.resolve() else str(p)


def _show(o: Observation | None) -> str:
    return "nothing" if o is None else f"{o.phase}[{o.index}] {o.what} = {o.value!r}"
