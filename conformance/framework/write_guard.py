"""A report directory that cannot be written (a full disk, a quota, a read-only remount): the
run ends INCOMPLETE, says why in one line, and leaves no file whose verdict disagrees with its
exit status.

* The first failed write is remembered, one line (``cannot write PATH: No space left on
  device``, :meth:`.recording.RunState.cannot_write`), and stops the run: the rows already
  in ``results.jsonl`` stay, a row that could not be written is not counted either.
* At the end (the innermost wrapper of ``pytest_sessionfinish``: after the summary, the
  reports, ``junit.xml`` and the shard's record were written, or failed to be), the run's
  ``ended`` is that line and the verdict is decided again (INCOMPLETE, or FAIL when a
  failure was seen: :mod:`.verdict`); ``summary.json``, ``summary.md`` and ``index.html``
  are written again with it, or removed when that fails too; half-written ``*.tmp`` files
  (the Allure results' too) and an unparsable ``junit.xml`` are removed; pytest's exit status becomes INTERRUPTED
  (``mdlri-conformance run`` exits with the verdict's code, 4).
* ``run.json`` gets its end record here, last, when it can be written; when it cannot, it
  keeps ``"ended": null``, which ``report`` reads as a run that never ended: INCOMPLETE too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from . import keys, rundir
from .verdicts import allure_writes, verdict
from .verdicts.summary import build_summary, fails_gate

#: the files that state the verdict: rewritten with the final one, or removed
VERDICT_FILES = ("summary.json", "summary.md", "index.html")


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, Any, Any]:
    state = session.config.stash.get(keys.state_key, None)
    try:
        result = yield
    except OSError as exc:
        if state is None:
            raise
        state.cannot_write(_written(exc), exc)
        result = None
    if state is None:
        return result
    for _ in range(2):  # the end record itself may be the first write that fails
        if state.write_error is not None:
            _incomplete(session, state)
        started = (Path(state.report_dir) / rundir.RUN_FILE).is_file()
        if not (getattr(state, "finish_status", None) or (state.write_error and started)):
            break  # no run to end (nothing collected, or discarded after a usage error)
        try:
            rundir.finish(state.report_dir, state.ended, int(session.exitstatus))
            break
        except OSError as exc:
            if state.write_error is not None:
                break
            state.cannot_write(rundir.RUN_FILE, exc)
    return result


def _written(exc: OSError) -> str | None:
    """The file a failed write names (None: a write that names none)."""
    return Path(exc.filename).name if exc.filename else None


def _incomplete(session: pytest.Session, state: Any) -> None:
    """The verdict and its files after a failed write (see the module docstring)."""
    report_dir = Path(state.report_dir)
    state.ended = state.write_error
    rows = state.results
    summary = state.summary
    if summary is None:
        summary = build_summary(rows, {c for r in rows for c in r["clauses"]},
                                state.backend_name, collected=state.collected,
                                ended=state.ended)
    else:
        selection = (summary.get("completeness") or {}).get("selection", "")
        complete = verdict.completeness(rows, state.collected, state.ended, selection)
        final = verdict.decide(rows, complete, sum(1 for r in rows if fails_gate(r)),
                               summary.get("unsupported") or [])
        summary.update(completeness=complete, verdict=final.to_dict(), gate=final.name.lower())
    state.summary = summary
    _remove_partial(report_dir)
    allure_dir = getattr(session.config.option, "allure_report_dir", None)
    if allure_dir:
        allure_writes.remove_partial(Path(allure_dir))
    from .verdicts.artefacts import write_all
    try:
        write_all(report_dir, rows, summary)
    except OSError:
        _remove_partial(report_dir)
        for name in VERDICT_FILES:
            (report_dir / name).unlink(missing_ok=True)
    final_name = summary["verdict"]["verdict"]
    session.exitstatus = (pytest.ExitCode.INTERRUPTED if final_name == verdict.INCOMPLETE
                          else pytest.ExitCode.TESTS_FAILED)


def _remove_partial(report_dir: Path) -> None:
    """Half-written files: ``*.tmp`` (:func:`.rundir.write_text`) and a junit.xml cut off."""
    for tmp in report_dir.glob("*.tmp"):
        tmp.unlink(missing_ok=True)
    junit = report_dir / "junit.xml"
    if junit.is_file():
        try:
            ET.parse(junit)
        except (ET.ParseError, OSError):
            junit.unlink(missing_ok=True)


__all__ = ["VERDICT_FILES", "pytest_sessionfinish"]
