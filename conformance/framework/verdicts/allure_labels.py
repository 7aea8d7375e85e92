"""Allure labels and attachments for the specs (active only when allure-pytest is).

Labels: each spec's area is its ``feature`` and ``parentSuite``; each clause id it cites is a
``story`` and a ``clause`` label, and all of them together (``"LIST-08, SEQ-03"``) its one
``suite``; plus ``level``, ``backend`` and ``nodeid`` (the spec's node id, by which
:mod:`.allure_status` finds its row at the end of the run, sets the Allure status from the
suite's outcome and adds the ``outcome`` label). The shipped Allure config groups the report by
parentSuite / suite, i.e. by area and clause, each spec once (a ``story`` per clause would list a
spec citing five clauses five times); these suite labels replace allure-pytest's defaults (the
Python package and module).

Links: each clause id links to the run's ``clauses.html``. The Allure report is
``<run>/allure-report/index.html``, so the default link is ``../clauses.html#ID``.
Allure 3's pages make a link clickable only when its URL is absolute http(s), mailto or tel
(others are shown as text), so a report opened from ``file://`` names each clause without a
link, and the result's description carries the clause's level, title and source instead. For
clickable links, publish the run directory and set ``MDLRI_CLAUSE_URL`` for the run: a format
string with ``{id}``, e.g. ``https://ci.example/run/clauses.html#{id}``.

Attachments: every FAIL / CHANGED / ERROR spec gets an ``expected vs observed`` text
attachment made from its outcome row (``("mdlri", info)`` user property of the plugin): the
failure line ``[CLAUSE] what: expected X, observed Y`` split into its parts, plus the
divergence's replay command; a divergence's shrunk case is attached as ``case.json``.

The plugin registers this module as a pytest plugin; its ``pytest_runtest_makereport`` wrapper
runs outermost: after the plugin has computed the row, and (at the setup report) after
allure-pytest has set the test's description, so the labels and the clause description stay.
Its ``pytest_sessionfinish`` runs :func:`.allure_status.rewrite` in the process that recorded
the rows (the xdist controller, or the one process of ``-n 0``), after every worker has
written its results, and writes a result for each row that has none (a worker that died in
a spec, CRASH, never closed its Allure result), so every gate failure is in the report.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

import pytest

from . import allure_status, allure_writes
from .. import keys, registry
from ..items import area_of, clause_ids, is_spec

#: environment variable: the clause link's format string (``{id}`` is the clause id)
CLAUSE_URL_VAR = "MDLRI_CLAUSE_URL"
#: the run's clauses.html as seen from ``<run>/allure-report/index.html``
DEFAULT_CLAUSE_URL = "../clauses.html#{id}"
#: outcomes that get the expected-vs-observed attachment
FAILING = frozenset({"FAIL", "CHANGED", "ERROR"})
#: the attachment's name
ATTACHMENT = "expected vs observed"
#: the user property the plugin puts each spec's outcome row in
ROW_KEY = "mdlri"

_LINE = re.compile(r"^\[(?P<clauses>[^\]]*)\]\s*(?P<what>.*?): expected (?P<expected>.*), "
                   r"observed (?P<observed>.*)$")


def _active(config: pytest.Config) -> bool:
    return config.pluginmanager.hasplugin("allure_pytest")


def clause_url(cid: str) -> str:
    """The link target of clause ``cid`` in the Allure report (``MDLRI_CLAUSE_URL`` or the
    run's clauses.html next to the report)."""
    return (os.environ.get(CLAUSE_URL_VAR) or DEFAULT_CLAUSE_URL).format(id=cid)


def label(item: pytest.Item) -> None:
    """Label a spec with area, clause ids, level and backend, and describe its clauses.

    Called at the setup report, after allure-pytest has set its own description (the
    docstring), which the clause lines then lead."""
    import allure
    allure.dynamic.label(allure_status.NODEID_LABEL, item.nodeid)
    ids = clause_ids(item)
    if not ids or registry.unknown(ids):
        return
    area = area_of(item, ids)
    allure.dynamic.feature(area)
    allure.dynamic.parent_suite(area)
    allure.dynamic.suite(", ".join(ids))
    for cid in ids:
        allure.dynamic.story(cid)
        allure.dynamic.label("clause", cid)
        allure.dynamic.link(clause_url(cid), name=cid)
    allure.dynamic.label("level", registry.level_of(ids))
    allure.dynamic.label("backend", item.config.getoption("--backend"))
    allure.dynamic.description(description(item, ids))


def description(item: pytest.Item, ids: tuple[str, ...]) -> str:
    """Markdown: one line per clause (id, level, title, source), then the spec's docstring."""
    doc = inspect.getdoc(getattr(item, "obj", None)) or ""
    return clause_lines(ids) + (f"\n\n{doc}" if doc else "")


def clause_lines(ids: Iterable[str]) -> str:
    """Markdown, one line per clause: id, level, title, source (known ids only)."""
    lines = []
    for cid in ids:
        if registry.unknown((cid,)):
            continue
        c = registry.get(cid)
        lines.append(f"- **{cid}** ({c.level}): {c.title} — source: {c.src}")
    return "\n".join(lines)


def row_result(row: dict[str, Any], attachment: str | None = None) -> dict[str, Any]:
    """An Allure result (``*-result.json``) made from a row alone, labelled as :func:`label`
    labels a spec: for a spec whose worker died in it (CRASH), which allure-pytest never
    closed. ``attachment``: the file name of its expected-vs-observed text."""
    nodeid = str(row["nodeid"])
    ids = [str(c) for c in row.get("clauses") or []]
    path, _, rest = nodeid.partition("::")
    name = rest.split("::")[-1] if rest else nodeid
    full = path.removesuffix(".py").replace("/", ".") + "#" + name.split("[")[0]
    labels = [(allure_status.NODEID_LABEL, nodeid)]
    if ids:
        area = str(row.get("area") or "")
        labels += [("feature", area), ("parentSuite", area), ("suite", ", ".join(ids))]
        labels += [(kind, cid) for cid in ids for kind in ("story", "clause")]
    labels += [(k, str(row[k])) for k in ("level", "backend") if row.get(k)]
    labels.append(("framework", "pytest"))
    now = int(time.time() * 1000)
    result: dict[str, Any] = {
        "uuid": str(uuid.uuid4()), "historyId": hashlib.md5(nodeid.encode()).hexdigest(),
        "testCaseId": hashlib.md5(full.encode()).hexdigest(), "fullName": full, "name": name,
        "status": "unknown", "stage": "finished", "start": now, "stop": now,
        "description": clause_lines(ids),
        "labels": [{"name": k, "value": v} for k, v in labels],
        "links": [{"type": "link", "url": clause_url(cid), "name": cid} for cid in ids]}
    if attachment:
        result["attachments"] = [{"name": ATTACHMENT, "source": attachment,
                                  "type": "text/plain"}]
    return result


def write_missing(results_dir: Path, rows: Iterable[dict[str, Any]], seen: set[str]) -> int:
    """Write a result, with its expected-vs-observed attachment, for each row whose spec has
    none in ``results_dir`` (its status and message as :func:`.allure_status.apply` sets
    them); returns how many."""
    last = {str(r["nodeid"]): r for r in rows if "nodeid" in r}
    written = 0
    for nodeid, row in last.items():
        if nodeid in seen:
            continue
        source = None
        if row.get("outcome") != "PASS":
            source = f"{uuid.uuid4()}-attachment.txt"
            (Path(results_dir) / source).write_text(expected_vs_observed(row),
                                                    encoding="utf-8")
        result = row_result(row, source)
        allure_status.apply(result, row)
        allure_status.write_json(Path(results_dir) / f"{result['uuid']}-result.json", result)
        written += 1
    return written


def expected_vs_observed(info: dict[str, Any]) -> str:
    """The attachment text for an outcome row: the failure line, then its parts.

    The parts come from the divergence record when there is one, else from the line itself
    (``[CLAUSE] what: expected X, observed Y``); a line of another form (an exception in the
    spec) is given as it is."""
    message = str(info.get("message") or "")
    lines = [message or "(no failure message)", ""]
    lines.append(f"outcome:  {info.get('outcome')} (level {info.get('level')}, "
                 f"area {info.get('area')})")
    lines.append(f"clauses:  {', '.join(info.get('clauses') or []) or '-'}")
    div = info.get("divergence") or {}
    m = _LINE.match(message)
    if m:
        lines.append(f"what:     {m['what']}")
    if "expected" in div or "observed" in div:
        lines += [f"expected: {div.get('expected')}", f"observed: {div.get('observed')}"]
    elif m:
        lines += [f"expected: {m['expected']}", f"observed: {m['observed']}"]
    else:
        lines.append("expected / observed: not in the message (the spec raised instead of "
                     "checking)")
    if div.get("replay"):
        lines.append(f"replay:   {div['replay']}")
    return "\n".join(lines) + "\n"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Label each spec (at its setup report); attach expected vs observed (and a divergence's
    case) to every failing one."""
    rep = yield
    if _active(item.config) and is_spec(item):
        if rep.when == "setup":
            label(item)
        info = dict(rep.user_properties).get(ROW_KEY)
        if info and info.get("outcome") in FAILING:
            _attach(info)
    return rep


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The Allure status of every result from its final row (:mod:`.allure_status`), in the
    process that recorded the rows; a row without a result (a CRASH) gets one."""
    config = session.config
    state = config.stash.get(keys.state_key, None)
    where = getattr(config.option, "allure_report_dir", None)
    if state is None or not where or not _active(config):
        return
    try:
        done = allure_status.rewrite(Path(where), state.results,
                                     (ATTACHMENT, expected_vs_observed))
        write_missing(Path(where), state.results, done.seen)
    except OSError as exc:
        # a full disk: the run ends INCOMPLETE in one line (write_guard)
        allure_writes.remove_partial(Path(where))
        state.cannot_write(exc.filename, exc)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """allure-pytest's writes in this process survive a full disk (allure_writes)."""
    if _active(config) and getattr(config.option, "allure_report_dir", None):
        allure_writes.install(config)


def _attach(info: dict[str, Any]) -> None:
    import allure
    case = (info.get("divergence") or {}).get("case")
    if case:
        allure.attach(json.dumps(case, indent=1), name="case.json",
                      attachment_type=allure.attachment_type.JSON)
    allure.attach(expected_vs_observed(info), name=ATTACHMENT,
                  attachment_type=allure.attachment_type.TEXT)
