"""The Allure status of each spec, set from the run's final rows (``results.jsonl``).

allure-pytest knows only pytest's outcome, which the suite bends so that pytest's exit status
is the gate's: a CHANGED spec reaches pytest as an xfail (Allure would show it "skipped",
``XFAIL CHANGED ...``), and the expectations file (XFAIL, XPASS, gated CHANGED, UNSUPPORTED on
a required capability) is applied after allure-pytest has read the report, in the recording
process (the xdist controller), not in the worker that wrote the result. So the recording
process rewrites each result file at the end of the run, from its row:

* PASS: ``passed``;
* what fails the gate (:func:`.summary.fails_gate`: FAIL, XPASS, ERROR, TIMEOUT, CRASH, a gated
  CHANGED, UNSUPPORTED on a required capability): ``failed``;
* CHANGED, an implementation-level behaviour change, reported, not gating: ``broken``;
* XFAIL (accepted by the expectations file), UNSUPPORTED, SKIP: ``skipped``.

So Allure's "failed" count is the gate's, "broken" counts the behaviour changes, and an
XFAIL is only ever an accepted result. Each result also gets an ``outcome`` label (the
shipped ``allurerc.json`` names a category per outcome by it) and, when it is not a PASS,
the outcome as a ``tag`` (Allure's tag filter) and the outcome's one line as its status
message (``CHANGED: [LIST-02] ...``, the JUnit message, :func:`.junit.message_of`); the
traceback stays. A result file is matched to its row
by the ``nodeid`` label :mod:`.allure_labels` puts on every spec; one without it, or whose
spec has no row, is left as allure-pytest wrote it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .junit import message_of
from .summary import COLUMNS, fails_gate

#: the label that carries a result's spec node id (set by allure_labels at setup)
NODEID_LABEL = "nodeid"
#: the label that carries the suite's outcome (the categories of allurerc.json match it)
OUTCOME_LABEL = "outcome"
#: the outcomes Allure shows as "skipped": accepted (XFAIL) or not judged
SKIPPED = frozenset({"XFAIL", "UNSUPPORTED", "SKIP"})
#: every outcome of the suite (a tag of one of these is the outcome's, replaced on a rewrite)
OUTCOMES = frozenset(COLUMNS)


def status_of(row: dict[str, Any]) -> str:
    """The Allure status of a row: ``passed``, ``failed`` (fails the gate), ``broken`` (a
    CHANGED that does not) or ``skipped`` (XFAIL, UNSUPPORTED, SKIP)."""
    if fails_gate(row):
        return "failed"
    outcome = row.get("outcome")
    if outcome == "CHANGED":
        return "broken"
    if outcome in SKIPPED:
        return "skipped"
    return "passed"


def apply(result: dict[str, Any], row: dict[str, Any]) -> bool:
    """Set one Allure result (parsed ``*-result.json``) from its row: status, the ``outcome``
    label, the status message. Whether it changed."""
    before = json.dumps(result, sort_keys=True)
    outcome = str(row.get("outcome", ""))
    result["status"] = status_of(row)
    labels = [lab for lab in result.get("labels") or [] if lab.get("name") != OUTCOME_LABEL
              and not (lab.get("name") == "tag" and lab.get("value") in OUTCOMES)]
    labels.append({"name": OUTCOME_LABEL, "value": outcome})
    if outcome != "PASS":
        labels.append({"name": "tag", "value": outcome})
    result["labels"] = labels
    if outcome != "PASS":
        details = dict(result.get("statusDetails") or {})
        details["message"] = message_of(row)
        result["statusDetails"] = details
    return json.dumps(result, sort_keys=True) != before


def nodeid_of(result: dict[str, Any]) -> str | None:
    """The spec node id of an Allure result (its ``nodeid`` label), or None."""
    for lab in result.get("labels") or []:
        if lab.get("name") == NODEID_LABEL:
            return str(lab.get("value"))
    return None


@dataclass
class Rewritten:
    """What :func:`rewrite` did: how many files changed, and the node ids of every result
    found (a row whose node id is not among them has no result: see
    :func:`.allure_labels.write_missing`)."""

    changed: int = 0
    seen: set[str] = field(default_factory=set)


def rewrite(results_dir: Path, rows: Iterable[dict[str, Any]],
            attachment: tuple[str, Callable[[dict[str, Any]], str]] | None = None
            ) -> Rewritten:
    """Rewrite every ``*-result.json`` in ``results_dir`` whose spec has a row (the last row
    of a node id counts). Each file is replaced whole. ``attachment``: (name, text of a row):
    the text attachment of that name is rewritten from the row too (a worker wrote it before
    the row's outcome was final: an ERROR that became TIMEOUT, a FAIL the expectations file
    accepted)."""
    by_id = {r["nodeid"]: r for r in rows if "nodeid" in r}
    done = Rewritten()
    for path in sorted(Path(results_dir).glob("*-result.json")):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not ours to judge: Allure reports an unreadable file itself
        nodeid = nodeid_of(result)
        if nodeid is not None:
            done.seen.add(nodeid)
        row = by_id.get(nodeid or "")
        if row is None:
            continue
        if attachment is not None:
            _rewrite_attachment(path.parent, result, attachment[0], attachment[1](row))
        if apply(result, row):
            write_json(path, result)
            done.changed += 1
    return done


def _rewrite_attachment(where: Path, result: dict[str, Any], name: str, text: str) -> None:
    for att in result.get("attachments") or []:
        source = str(att.get("source") or "")
        if att.get("name") != name or not source or "/" in source or source.startswith("."):
            continue
        path = where / source
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except (OSError, UnicodeDecodeError):
            continue  # not a text attachment this module wrote
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write an Allure results file whole (a temporary file, then renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["NODEID_LABEL", "OUTCOME_LABEL", "Rewritten", "apply", "nodeid_of", "rewrite",
           "status_of", "write_json"]
