"""JUnit XML that CI readers show: each spec's clauses, level, area and outcome.

pytest's ``--junitxml`` knows nothing of the suite's outcomes: it writes a call-phase ERROR,
a TIMEOUT and a FAIL alike as ``<failure>``, a CRASH as ``<error message="failed on setup
with ...">``, and every user property of the teardown report as a testcase ``<property>``
whose value is a Python repr (``{'changed': {}}``), under xunit2 too, whose schema forbids
testcase properties. The spec's clause ids never reach the file: the plugin's ``("mdlri",
info)`` property travels with the call report, not the teardown report pytest reads.

This plugin rewrites the file pytest wrote, after pytest wrote it (``pytest_sessionfinish``,
trylast), from the per-spec info it collected from the reports; it holds references to
the info dicts, so what the plugin's recorder decides later (XFAIL, XPASS, gated CHANGED,
required UNSUPPORTED) is what it writes. Under xdist only the controller writes the file
and sees every report (a worker's CRASH report included), so it runs there only.

Per testcase (a spec's node id):

* the result element follows the outcome (the verdict's categories): ERROR, TIMEOUT, CRASH
  -> ``<error>``; FAIL, XPASS, gated CHANGED, UNSUPPORTED on a required capability ->
  ``<failure>``; UNSUPPORTED, SKIP, XFAIL and an ungated CHANGED -> ``<skipped>``; PASS -> none.
  ``type`` is the outcome, ``message`` the one-line outcome message (``FAIL: [CAP-01] ...:
  expected X, observed Y``); the element's text stays pytest's (the traceback);
* xunit1 (``-o junit_family=xunit1``): ``<properties>`` with ``clause`` (the ids, comma
  separated), ``level``, ``area``, ``outcome``, then the rest of the row (``fingerprint``,
  ``leaks``, ``state``, ``hypothesis``, ``needs``, ``stacks`` ...): strings as they are,
  booleans ``true``/``false``, everything else JSON (keys sorted), never a Python repr;
* xunit2 (pytest's default): no testcase ``<properties>`` (the schema has none); the same
  properties as one JSON object on a ``mdlri: {...}`` line at the top of ``<system-out>``.

The testsuite's ``errors``/``failures``/``skipped`` counts are recounted from the elements.
A file that cannot be read or does not parse is left as pytest wrote it (one warning line).
"""

from __future__ import annotations

import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pytest

from mdlri_conformance.reports.stack import stack_text

from .. import keys
from .summary import merged_stack

#: the plugin's user-property key of a spec's outcome info
ROW_KEY = "mdlri"
#: other user properties of the suite, and the property name each is written under
EXTRA_KEYS = {"mdlri_fingerprint": "fingerprint", "mdlri_leaks": "leaks",
              "mdlri_state": "state", "mdlri_hypothesis": "hypothesis"}
#: user properties left out of the file (per-process data, not per spec)
DROPPED_KEYS = frozenset({"mdlri_probe"})
ERROR_OUTCOMES = frozenset({"ERROR", "TIMEOUT", "CRASH"})
FAILURE_OUTCOMES = frozenset({"FAIL", "XPASS"})
SKIPPED_OUTCOMES = frozenset({"UNSUPPORTED", "SKIP", "XFAIL", "CHANGED"})
RESULT_TAGS = ("error", "failure", "skipped")
#: the properties written first, in this order (the rest follow sorted by name)
LEADING = ("clause", "level", "area", "outcome")
#: the info keys that are not properties of their own
_NOT_PROPERTIES = frozenset({"outcome", "clauses", "level", "area", "message"})
_RANK = {"error": 3, "failure": 2, "skipped": 1, None: 0}
#: characters XML 1.0 cannot hold (written as #xNN, as pytest's own escaping does)
_ILLEGAL = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold replaced by ``#xNN``."""
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def kind_of(info: dict[str, Any]) -> str | None:
    """The JUnit result element of an outcome: ``error``, ``failure``, ``skipped`` or None
    (PASS). A gated CHANGED and an UNSUPPORTED on a required capability fail the gate."""
    outcome = info.get("outcome")
    if outcome in ERROR_OUTCOMES:
        return "error"
    if outcome in FAILURE_OUTCOMES or (outcome == "CHANGED" and info.get("gated")) \
            or (outcome == "UNSUPPORTED" and info.get("required")):
        return "failure"
    if outcome in SKIPPED_OUTCOMES:
        return "skipped"
    return None


def message_of(info: dict[str, Any]) -> str:
    """The result element's one-line message, starting with the outcome."""
    outcome, msg = str(info.get("outcome", "")), str(info.get("message") or "")
    if outcome == "XPASS":
        return f"XPASS: expected {info.get('expected')} ({info.get('reason', '')}) but it passed"
    if outcome == "XFAIL":
        return f"XFAIL: expected {info.get('expected')}: {info.get('reason', '')}"
    if outcome == "CHANGED" and info.get("gated"):
        return f"CHANGED (gated): {msg}"
    if outcome == "UNSUPPORTED" and info.get("required"):
        return (f"UNSUPPORTED on required capability {', '.join(info['required'])}: "
                f"{msg.removeprefix('UNSUPPORTED: ')}")
    if not msg:
        return outcome
    return msg if msg.startswith(outcome) else f"{outcome}: {msg}"


def property_value(value: Any) -> str:
    """A property's text: a string as it is, a boolean ``true``/``false``, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


@dataclass
class Case:
    """What the reports of one node id said: the outcome infos (in report order, the same
    dicts the recorder updates) and the other user properties."""

    infos: list[dict[str, Any]] = field(default_factory=list)
    props: dict[str, Any] = field(default_factory=dict)

    def add(self, user_properties: Iterable[tuple[str, Any]]) -> None:
        for key, value in user_properties:
            if key == ROW_KEY and isinstance(value, dict):
                if not any(value is i for i in self.infos):
                    self.infos.append(value)
            elif key not in DROPPED_KEYS:
                self.props[key] = value


def properties(infos: list[dict[str, Any]], props: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, value) properties of a testcase from its outcome infos (the most severe
    one names the outcome; the clause ids of all of them) and its other user properties;
    values as recorded (:func:`property_value` makes the text of one)."""
    main = max(infos, key=lambda i: _RANK[kind_of(i)]) if infos else {}
    clauses = list(dict.fromkeys(c for i in infos for c in i.get("clauses") or ()))
    values: dict[str, Any] = {}
    if infos:
        values.update(clause=",".join(clauses), level=main.get("level", ""),
                      area=main.get("area", ""), outcome=main.get("outcome", ""))
        outcomes = [i.get("outcome") for i in infos]
        if len(set(outcomes)) > 1:
            values["outcomes"] = outcomes
        for info in infos:
            for key, value in info.items():
                if key not in _NOT_PROPERTIES and key not in values:
                    values[key] = value
    for key, value in props.items():
        values.setdefault(EXTRA_KEYS.get(key, key), value)
    order = [k for k in LEADING if k in values] + sorted(k for k in values if k not in LEADING)
    return [(k, values[k]) for k in order]


def mangle(nodeid: str) -> list[str]:
    """pytest's dotted ``classname`` parts and ``name`` of a node id (its own function when
    it has one, else the same rule)."""
    try:
        from _pytest.junitxml import mangle_test_address
        return list(mangle_test_address(nodeid))
    except Exception:  # noqa: BLE001 - pytest moved or changed it: the long-standing rule
        path, bracket, params = nodeid.partition("[")
        names = path.split("::")
        names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
        names[-1] += bracket + params
        return names


def case_key(nodeid: str, prefix: str | None = None) -> tuple[str, str]:
    """The (classname, name) pytest gives a node id's testcase."""
    names = mangle(nodeid)
    classnames = names[:-1]
    if prefix:
        classnames.insert(0, prefix)
    return ".".join(classnames), names[-1]


def _result_element(info: dict[str, Any], original: ET.Element | None) -> ET.Element | None:
    kind = kind_of(info)
    if kind is None:
        return None
    message = xml_safe(message_of(info))
    el = ET.Element(kind, message=message, type=str(info.get("outcome", "")))
    text = original.text if original is not None and original.text else message
    el.text = xml_safe(text)
    return el


def _set_properties(tc: ET.Element, props: list[tuple[str, Any]], family: str) -> None:
    for old in tc.findall("properties"):
        tc.remove(old)
    if not props:
        return
    if family == "xunit1":
        node = ET.Element("properties")
        for name, value in props:
            ET.SubElement(node, "property", name=name, value=xml_safe(property_value(value)))
        tc.insert(0, node)
        return
    line = xml_safe("mdlri: " + json.dumps(dict(props), separators=(", ", ": "), default=repr))
    out = tc.find("system-out")
    if out is None:
        ET.SubElement(tc, "system-out").text = line + "\n"
    else:
        out.text = line + "\n" + (out.text or "")


def set_stack(root: ET.Element, stack: str) -> None:
    """Name the stack under test (:func:`reports.stack.stack_text`) in a ``stack`` property of
    every ``<testsuite>`` (its ``<properties>``, first child, as the schema places it)."""
    for suite in root.iter("testsuite"):
        props = suite.find("properties")
        if props is None:
            props = ET.Element("properties")
            suite.insert(0, props)
        for old in [p for p in props.findall("property") if p.get("name") == "stack"]:
            props.remove(old)
        ET.SubElement(props, "property", name="stack", value=xml_safe(stack))


def rewrite_tree(root: ET.Element, cases: dict[str, Case], family: str = "xunit1",
                 prefix: str | None = None, stack: str = "") -> int:
    """Rewrite the testcases of ``cases`` in a parsed junit tree, and name the ``stack`` when
    given; returns how many testcases."""
    family = "xunit1" if family == "legacy" else family
    if stack:
        set_stack(root, stack)
    by_key: dict[tuple[str, str], list[ET.Element]] = {}
    for tc in root.iter("testcase"):
        by_key.setdefault((tc.get("classname", ""), tc.get("name", "")), []).append(tc)
    done = 0
    for nodeid, case in cases.items():
        tcs = by_key.get(case_key(nodeid, prefix), [])
        if not tcs or not case.infos:
            continue
        owned: dict[int, list[dict[str, Any]]] = {id(tc): [] for tc in tcs}
        results = [(tc, el) for tc in tcs for el in list(tc) if el.tag in RESULT_TAGS]
        judged = [i for i in case.infos if i.get("outcome") != "PASS"]
        if len(results) == len(judged):  # one result element per non-passing report
            for (tc, old), info in zip(results, judged):
                new = _result_element(info, old)
                if new is not None:  # else an outcome this module does not know: pytest's
                    at = list(tc).index(old)
                    tc.remove(old)
                    tc.insert(at, new)
                owned[id(tc)].append(info)
            rest = [i for i in case.infos if not any(i is j for j in judged)]
            owned[id(tcs[0])].extend(rest)
        else:  # an order this plugin does not know: keep pytest's elements
            owned[id(tcs[0])].extend(case.infos)
        for tc in tcs:  # each testcase's infos in report order
            mine = [i for i in case.infos if any(i is j for j in owned[id(tc)])]
            _set_properties(tc, properties(mine or case.infos, case.props), family)
        done += 1
    for suite in root.iter("testsuite"):
        for tag, attr in (("error", "errors"), ("failure", "failures"), ("skipped", "skipped")):
            suite.set(attr, str(sum(1 for tc in suite.iter("testcase") for _ in tc.iter(tag))))
    return done


def rewrite_file(path: Path, cases: dict[str, Case], family: str = "xunit1",
                 prefix: str | None = None, stack: str = "") -> int:
    """Rewrite ``path`` in place (atomically); returns the testcases rewritten."""
    tree = ET.parse(path)
    done = rewrite_tree(tree.getroot(), cases, family, prefix, stack)
    tmp = path.with_name(path.name + ".tmp")
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)
    return done


class JUnitRewriter:
    """Collects each spec's outcome infos from the reports; rewrites the file at the end."""

    def __init__(self, path: Path, family: str, prefix: str | None) -> None:
        self.path = path
        self.family = family
        self.prefix = prefix
        self.cases: dict[str, Case] = {}
        #: each process's stack under test (sent once, with its first report)
        self.stacks: dict[str, dict[str, str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = getattr(report, "user_properties", None)
        if props:
            self.cases.setdefault(report.nodeid, Case()).add(props)
            stack = dict(props).get(keys.STACK)
            if stack:
                self.stacks[str(stack.get("process", "main"))] = stack.get("stack") or {}

    @pytest.hookimpl(trylast=True)  # after junitxml's LogXML wrote the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.cases or not self.path.is_file():
            return
        config = getattr(session, "config", None)
        stack = stack_text({"backend": config.getoption("--backend", None) if config else None,
                            "stack": merged_stack(self.stacks.values())}) if self.stacks else ""
        try:
            rewrite_file(self.path, self.cases, self.family, self.prefix, stack)
        except (OSError, ET.ParseError) as exc:
            print(f"mdlri: junit: {self.path} left as pytest wrote it ({exc})", file=sys.stderr)


def pytest_configure(config: pytest.Config) -> None:
    """Register the rewriter in the process that writes ``--junitxml`` (not in a worker)."""
    xmlpath = getattr(config.option, "xmlpath", None)
    if not xmlpath or hasattr(config, "workerinput") \
            or config.pluginmanager.has_plugin("mdlri-junit-rewriter"):
        return
    path = Path(os.path.normpath(os.path.abspath(os.path.expanduser(os.path.expandvars(
        xmlpath)))))
    config.pluginmanager.register(
        JUnitRewriter(path, str(config.getini("junit_family")),
                      getattr(config.option, "junitprefix", None)), "mdlri-junit-rewriter")


__all__ = ["Case", "JUnitRewriter", "case_key", "kind_of", "message_of", "properties",
           "property_value", "rewrite_file", "rewrite_tree", "xml_safe"]
