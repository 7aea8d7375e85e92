"""A spec's pytest result mapped to the suite's outcome (DESIGN.md "Behaviour levels").

A failing spec of level *documented* is FAIL; of level *implementation* it is CHANGED (a
behaviour change, reported but not failing the run); *undefined* specs record a fingerprint
and pass. A missing capability or a 207000 / 207019 (:class:`.outcomes.Unsupported`) is
UNSUPPORTED with its reason, also when Hypothesis groups several of them and nothing else
failed. The outcome travels on the report as the ``mdlri`` user property (:mod:`.keys`).
"""

from __future__ import annotations

from typing import Any

import pytest

from mdlri_conformance.backends.contract import Cap

from . import keys, registry
from .items import area_of, clause_ids, is_spec
from .outcomes import Unsupported, current_clauses

OUTCOMES = ("PASS", "FAIL", "CHANGED", "UNSUPPORTED", "ERROR", "SKIP", "TIMEOUT", "CRASH")


def _leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside an exception group (the exception itself otherwise)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


def _judged(exc: BaseException) -> list[BaseException]:
    """The leaves that are not :class:`.outcomes.Unsupported` (what the outcome is judged on)."""
    return [e for e in _leaves(exc) if not isinstance(e, Unsupported)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """207000 / 207019 and other Unsupported: UNSUPPORTED, also when Hypothesis groups
    several of them ("found N distinct failures") and nothing else failed."""
    token = current_clauses.set(clause_ids(item))
    try:
        return (yield)
    except Unsupported as exc:
        _note_missing(item, [exc])
        pytest.skip(f"UNSUPPORTED: {exc}")
    except BaseExceptionGroup as group:
        if _judged(group):
            raise
        _note_missing(item, _leaves(group))
        pytest.skip(f"UNSUPPORTED: {_leaves(group)[0]}")
    finally:
        current_clauses.reset(token)


def _note_missing(item: pytest.Item, excs: list[BaseException]) -> None:
    """Add the capabilities the :class:`.outcomes.Unsupported` ``excs`` name (a readback
    without data movement) to the item's missing ones, for its row's ``missing``."""
    caps = [c for e in excs for c in getattr(e, "caps", ())]
    if caps:
        had = item.stash.get(keys.missing_key, None) or []
        item.stash[keys.missing_key] = list(dict.fromkeys([*had, *caps]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    if not is_spec(item):
        return rep
    ids = clause_ids(item)
    level = registry.level_of(ids) if ids and not registry.unknown(ids) else "documented"
    outcome = None
    message = ""
    if rep.when == "call" or rep.outcome != "passed":
        if rep.passed and rep.when == "call":
            outcome = "PASS"
        elif rep.skipped:
            reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
            message = reason.removeprefix("Skipped: ")
            outcome = "UNSUPPORTED" if message.startswith("UNSUPPORTED") else "SKIP"
        elif rep.failed and rep.when == "call":
            message = _failure_line(call)
            judged = _judged(call.excinfo.value)
            failure = bool(judged) and all(isinstance(e, AssertionError) for e in judged)
            if level == "implementation" and failure:
                outcome = "CHANGED"
                rep.outcome = "skipped"
                rep.wasxfail = f"CHANGED {message}"
            else:
                outcome = "FAIL" if failure else "ERROR"
        elif rep.failed:
            message = _failure_line(call)
            outcome = "ERROR"
    if outcome is not None:
        # every row names the capabilities its spec declares (``requires``), whatever the
        # outcome: `diff --stacks` tells a data-plane PASS from a control-plane one by them
        info = {"outcome": outcome, "clauses": list(ids), "level": level,
                "area": area_of(item, ids), "message": message,
                "needs": sorted({Cap(c).value for m in item.iter_markers("requires")
                                 for c in m.args})}
        if outcome == "UNSUPPORTED":
            # what was missing (required capabilities, verdicts)
            if item.stash.get(keys.missing_key, None):
                info["missing"] = item.stash[keys.missing_key]
            if item.stash.get(keys.unreached_key, False):
                info["backend_unavailable"] = True
        first = _first_judged(call.excinfo.value) if call.excinfo else None
        details = getattr(first, "details", None)
        if details:
            info["divergence"] = details
        rep.user_properties.append((keys.RESULT, info))
        for key, prop in ((keys.probe_key, keys.PROBE), (keys.stack_key, keys.STACK)):
            found = item.config.stash.get(key, None)
            if found is not None and not found.get("sent"):
                found["sent"] = True  # once per process: the recorder keeps it per process
                rep.user_properties.append((prop, {k: v for k, v in found.items()
                                                   if k != "sent"}))
    return rep


def _first_judged(exc: BaseException) -> BaseException:
    """The exception an outcome message describes: the first judged leaf of a group."""
    judged = _judged(exc)
    return judged[0] if judged else exc


def _failure_line(call: pytest.CallInfo[None]) -> str:
    exc = _first_judged(call.excinfo.value) if call.excinfo else None
    if exc is None:
        return ""
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {first}"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    info = dict(getattr(report, "user_properties", ())).get(keys.RESULT)  # CollectReports have none
    if not info:
        return None
    if info["outcome"] == "CHANGED":
        return "changed", "C", ("CHANGED", {"yellow": True})
    if info["outcome"] == "UNSUPPORTED" and info.get("required"):
        return "failed", "F", ("UNSUPPORTED (required)", {"red": True})
    if info["outcome"] == "UNSUPPORTED":
        return "unsupported", "U", ("UNSUPPORTED", {"yellow": True})
    if info["outcome"] == "XFAIL":
        return "xfailed", "x", ("XFAIL", {"yellow": True})
    if info["outcome"] == "XPASS":
        return "xpassed", "X", ("XPASS", {"red": True})
    return None
