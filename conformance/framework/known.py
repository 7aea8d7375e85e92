"""The known divergences of a backend (``--expectations``): which specs are expected to
diverge and why, and which capabilities the machine must have. An input of the run, read
before it starts; the shipped files are package data beside this module
(``--expectations sim|acl-emulator|cann-681ef76|atlas-a2|atlas-a3``).

A TOML file (``conformance/framework/expectations/<backend>.toml``) lists entries::

    # optional: CHANGED outcomes of these clause ids (or id prefixes ending in '*') fail the gate
    gate_changed = ["LIST-*"]

    [[expect]]
    id = "test_capture.py::test_cap08_default_stream"   # a spec (node id or its tail) or a clause id
    outcome = "FAIL"               # FAIL | CHANGED | UNSUPPORTED | ERROR | TIMEOUT | CRASH
    reason = "CAP-08: CaptureBegin(NULL) gives 107000 on this backend"
    link = "https://tracker.example/123"   # or note = "..."
    version = ">=1.17"             # optional: applies only when the backend's version matches

    # optional: capabilities this machine must have (conformance/capabilities, backends.contract.Cap
    # values); a spec UNSUPPORTED for lack of one of them fails the gate (a must-pass list)
    required_capabilities = ["capture", "listing", "task_type", "seq_id", "get_params"]

A spec is UNSUPPORTED "on" a capability when the capability was missing before it ran (its
``requires`` marker named it and the backend or the probes lack it), or when a call answered
207000 / 207019 during a spec that requires it.

An entry whose outcome happens turns that result into XFAIL; a spec an entry names that
passes is XPASS, which fails the gate (as in WPT and the Vulkan CTS). Malformed files,
entries for ids no spec knows, entries without a reason, and entries that matched nothing
in a run are one-line errors naming the file and line.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from . import registry

OUTCOMES = ("FAIL", "CHANGED", "UNSUPPORTED", "ERROR", "TIMEOUT", "CRASH")
_KEYS = {"id", "outcome", "reason", "link", "note", "version"}
_VERSION = re.compile(r"^(==|!=|>=|<=|>|<)?\s*(\d+(?:\.\d+)*)$")


class ExpectationsError(Exception):
    """A problem with an expectations file: one line, naming the file and line."""


@dataclass(frozen=True)
class Entry:
    """One ``[[expect]]`` entry."""

    id: str
    outcome: str
    reason: str
    line: int
    link: str = ""
    note: str = ""
    version: str = ""

    def matches(self, nodeid: str, clauses: Iterable[str]) -> bool:
        """True if this entry names the spec (node id or its tail) or one of its clauses."""
        for cand in (nodeid, nodeid.split("[", 1)[0]):
            if cand == self.id or cand.endswith("/" + self.id) or cand.endswith("::" + self.id):
                return True
        return self.id in clauses


@dataclass
class Expectations:
    """A parsed expectations file."""

    path: Path
    entries: list[Entry]
    gate_changed: list[str] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    #: Cap values whose absence fails the gate
    required: frozenset[str] = frozenset()

    def required_missing(self, row: dict[str, Any]) -> list[str]:
        """The required capabilities an UNSUPPORTED row is unsupported on (see the module
        docstring); empty for any other row."""
        if row.get("outcome") != "UNSUPPORTED" or not self.required \
                or row.get("backend_unavailable"):  # no backend at all: NOTHING TESTED
            return []
        on = row.get("missing") or row.get("needs") or []
        return sorted(set(on) & self.required)

    def applicable(self, version: str) -> list[Entry]:
        """The entries whose version condition holds for ``version``."""
        return [e for e in self.entries if version_matches(e.version, version)]

    def lookup(self, nodeid: str, clauses: Iterable[str], version: str) -> Entry | None:
        """The first applicable entry for a spec, marking it used."""
        cl = list(clauses)
        for e in self.applicable(version):
            if e.matches(nodeid, cl):
                self.used.add(e.line)
                return e
        return None

    def gates_changed(self, clauses: Iterable[str]) -> bool:
        """True if a CHANGED outcome of a spec citing ``clauses`` fails the gate."""
        return any(fnmatch.fnmatchcase(c, pat) for c in clauses for pat in self.gate_changed)

    def unused(self, version: str) -> list[Entry]:
        return [e for e in self.applicable(version) if e.line not in self.used]


def _line_of(text: str, index: int) -> int:
    """Line number of the index-th ``[[expect]]`` header (1-based)."""
    seen = -1
    for no, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("[[expect]]"):
            seen += 1
            if seen == index:
                return no
    return 0


def version_matches(cond: str, version: str) -> bool:
    """``cond`` like ``>=1.17`` against a version string containing ``1.17.0``."""
    if not cond:
        return True
    m = _VERSION.match(cond.strip())
    found = re.search(r"\d+(?:\.\d+)+|\d+", version or "")
    if not m or not found:
        return False
    op = m.group(1) or "=="
    want = tuple(int(p) for p in m.group(2).split("."))
    have = tuple(int(p) for p in found.group(0).split("."))[: len(want)]
    return {"==": have == want, "!=": have != want, ">=": have >= want, "<=": have <= want,
            ">": have > want, "<": have < want}[op]


def load(path: str | Path, known_ids: Iterable[str] | None = None) -> Expectations:
    """Parse and validate a file; ``known_ids`` (spec node ids and clause ids) checks ids."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationsError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"{p}: malformed TOML ({exc})") from None
    extra = set(data) - {"expect", "gate_changed", "backend", "required_capabilities"}
    if extra:
        raise ExpectationsError(f"{p}: unknown top-level key(s) {', '.join(sorted(extra))}")
    gate_changed = data.get("gate_changed", [])
    if not isinstance(gate_changed, list) or not all(isinstance(g, str) for g in gate_changed):
        raise ExpectationsError(f"{p}: gate_changed must be a list of clause ids or patterns")
    required = data.get("required_capabilities", [])
    caps = _cap_values()
    if not isinstance(required, list) or not all(isinstance(c, str) for c in required):
        raise ExpectationsError(f"{p}: required_capabilities must be a list of capability names")
    unknown_caps = [c for c in required if c not in caps]
    if unknown_caps:
        raise ExpectationsError(f"{p}: unknown capabilit(y/ies) {', '.join(unknown_caps)} in "
                                f"required_capabilities (known: {', '.join(sorted(caps))})")
    raw = data.get("expect", [])
    if not isinstance(raw, list):
        raise ExpectationsError(f"{p}: 'expect' must be an array of tables ([[expect]])")
    known = set(known_ids) if known_ids is not None else None
    entries: list[Entry] = []
    for i, r in enumerate(raw):
        line = _line_of(text, i)
        where = f"{p}:{line}"
        bad = set(r) - _KEYS
        if bad:
            raise ExpectationsError(f"{where}: unknown key(s) {', '.join(sorted(bad))}")
        for k in ("id", "outcome", "reason"):
            if not isinstance(r.get(k), str) or not r[k].strip():
                raise ExpectationsError(f"{where}: entry without a {k}")
        if r["outcome"] not in OUTCOMES:
            raise ExpectationsError(f"{where}: outcome {r['outcome']!r} is not one of "
                                    f"{', '.join(OUTCOMES)}")
        if r.get("version") and not _VERSION.match(str(r["version"]).strip()):
            raise ExpectationsError(f"{where}: version condition {r['version']!r} is not like '>=1.17'")
        if known is not None and not _known(r["id"], known):
            raise ExpectationsError(f"{where}: unknown id {r['id']!r} (no such spec or clause)")
        entries.append(Entry(id=r["id"], outcome=r["outcome"], reason=r["reason"], line=line,
                             link=r.get("link", ""), note=r.get("note", ""),
                             version=str(r.get("version", ""))))
    return Expectations(p, entries, gate_changed, required=frozenset(required))


def _cap_values() -> set[str]:
    from mdlri_conformance.backends.contract import Cap
    return {c.value for c in Cap}


def known_ids(spec_dir: Path) -> set[str]:
    """Clause ids plus ``test_file.py::test_name`` and full node ids of every spec function
    (found by scanning the spec modules, so it works before and without collection)."""
    ids = set(registry.clauses())
    for f in sorted(spec_dir.glob("test_*.py")):
        for name in re.findall(r"^(?:async )?def (test_\w+)", f.read_text(encoding="utf-8"), re.M):
            ids.add(f"{f.name}::{name}")
            ids.add(f"conformance/specs/{f.name}::{name}")
    return ids


def _known(ident: str, known: set[str]) -> bool:
    base = ident.split("[", 1)[0]  # a parametrized id names its function
    if base in known:
        return True
    return any(k.endswith("/" + base) or k.endswith("::" + base) for k in known)


def apply(outcome: str, entry: Entry | None) -> str:
    """The final outcome of a result given its matching entry (if any)."""
    if entry is None:
        return outcome
    if outcome == "PASS":
        return "XPASS"
    if outcome == entry.outcome:
        return "XFAIL"
    return outcome


def describe(entry: Entry | None) -> dict[str, Any]:
    """What a result row carries about its expectation."""
    if entry is None:
        return {}
    return {"expected": entry.outcome, "reason": entry.reason,
            "link": entry.link or entry.note, "expectation_line": entry.line}
