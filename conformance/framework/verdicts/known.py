"""The known divergences of a backend (``--expectations``): which specs are expected to
diverge and why, and which capabilities the machine must have. An input of the run, read
before it starts; the shipped files are package data beside this module
(``--expectations sim|acl-emulator|cann-681ef76|atlas-a2|atlas-a3``).

A TOML file (UTF-8, ``conformance/framework/expectations/<backend>.toml``) lists entries::

    # optional: the --backend the file is written for (sim, acl or package.module:factory);
    # a run on another backend refuses the file
    backend = "acl"

    # optional: CHANGED outcomes of these clause ids (or id prefixes ending in '*') fail the gate
    gate_changed = ["LIST-*"]

    [[expect]]
    id = "test_capture.py::test_cap08_default_stream"   # a spec (node id or its tail) or a clause id
    outcome = "FAIL"               # FAIL | CHANGED | UNSUPPORTED | ERROR | TIMEOUT | CRASH
    reason = "CAP-08: CaptureBegin(NULL) gives 107000 on this backend"
    link = "https://tracker.example/123"   # or note = "..."
    version = ">=1.17"             # optional: applies only when the backend's version matches
    [expect.signature]             # optional: this divergence wherever a spec reaches it
    clause = "CAP-08"              #   (see below; or inline: signature = { clause = ... })
    call = "aclmdlRICaptureBegin"  # a name or fnmatch pattern, or a list of them
    expected = "0"
    observed = "107000"

    # optional: capabilities this machine must have (conformance/capabilities, backends.contract.Cap
    # values); a spec UNSUPPORTED for lack of one of them fails the gate (a must-pass list)
    required_capabilities = ["capture", "listing", "task_type", "seq_id", "get_params"]

A spec is UNSUPPORTED "on" a capability when the capability was missing before it ran (its
``requires`` marker named it and the backend or the probes lack it), or when a call answered
207000 / 207019 during a spec that requires it.

An entry whose outcome happens turns that result into XFAIL; a spec an entry names that
passes is XPASS, which fails the gate (as in WPT and the Vulkan CTS). Malformed files (not
UTF-8, not TOML, a ``backend`` that is no backend name), a file written for another
backend, entries for ids no spec knows, entries without a reason, and entries that matched
nothing in a run are one-line errors naming the file and line.

A known bug shows wherever a spec reaches it: a generated or stateful spec (the capture
state machine) can meet the divergence an entry names under another spec's id. An entry's
``signature`` (:class:`Signature`) names it by the failure message every check writes,
``[CLAUSE,...] what: expected X, observed Y`` (``conformance/expect.py``): the clause among
the message's clauses, the call (the first word of ``what``; names or ``fnmatch`` patterns,
one or a list), and the expected and observed values (the whole text, or the code before
its name: ``107030`` matches ``107030 (RT_CAPTURE_MODE_NOT_SUPPORT)``). A result of any
spec with the entry's outcome and a message of that signature is then XFAIL too. The
signature widens nothing else: a failure with another message stays what it was, a spec
that passes is not matched by a signature, and the spec the entry names is matched by its
id as before (XPASS when it passes).
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

from .. import registry

OUTCOMES = ("FAIL", "CHANGED", "UNSUPPORTED", "ERROR", "TIMEOUT", "CRASH")
_KEYS = {"id", "outcome", "reason", "link", "note", "version", "signature"}
_SIGNATURE_KEYS = ("clause", "call", "expected", "observed")
#: the built-in backend names a file's ``backend`` may hold (else package.module:factory)
_BACKENDS = ("sim", "acl")
#: the first line of a check's failure message (``conformance/expect.py``)
_MESSAGE = re.compile(r"^\[(?P<clauses>[^\]]*)\] (?P<what>.*): expected (?P<expected>.*), "
                      r"observed (?P<observed>.*)$")
_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_VERSION = re.compile(r"^(==|!=|>=|<=|>|<)?\s*(\d+(?:\.\d+)*)$")


class ExpectationsError(Exception):
    """A problem with an expectations file: one line, naming the file and line."""


@dataclass(frozen=True)
class Signature:
    """A divergence as a failure message shows it: clause, call, expected and observed
    values (see the module docstring)."""

    clause: str
    calls: tuple[str, ...]
    expected: str
    observed: str

    def matches(self, message: str) -> bool:
        """Whether the first line of a failure ``message`` shows this divergence."""
        m = _MESSAGE.match((message or "").split("\n", 1)[0])
        if m is None:
            return False
        if self.clause not in (c.strip() for c in m["clauses"].split(",")):
            return False
        call = _CALL.match(m["what"])
        if call is None or not any(fnmatch.fnmatchcase(call.group(0), c) for c in self.calls):
            return False
        return _value_matches(self.expected, m["expected"]) and \
            _value_matches(self.observed, m["observed"])


def _value_matches(want: str, text: str) -> bool:
    """``text`` is ``want``, or ``want`` followed by its name in parentheses."""
    text = text.strip()
    return text == want or text.startswith(want + " (")


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
    signature: Signature | None = None

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

    def lookup(self, nodeid: str, clauses: Iterable[str], version: str, outcome: str = "",
               message: str = "") -> Entry | None:
        """The first applicable entry for a spec, marking it used: one naming the spec (or
        one of its ``clauses``), else one whose outcome is ``outcome`` and whose signature
        ``message`` shows."""
        cl = list(clauses)
        entries = self.applicable(version)
        for e in entries:
            if e.matches(nodeid, cl):
                self.used.add(e.line)
                return e
        for e in entries:
            if e.signature is not None and e.outcome == outcome and e.signature.matches(message):
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


def _read_text(p: Path) -> str:
    """The file's text (UTF-8); one-line errors for a file that cannot be read or is not
    UTF-8."""
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ExpectationsError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ExpectationsError(f"{p}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                                f"offset {exc.start}); save the file as UTF-8") from None


def _check_backend(p: Path, written_for: Any, backend: str | None) -> None:
    """The file's ``backend`` is a backend name, and ``backend`` (the run's ``--backend``,
    when given) is the one the file is written for."""
    if written_for is None:
        return
    if not isinstance(written_for, str) or not (written_for in _BACKENDS or ":" in written_for):
        raise ExpectationsError(f"{p}: backend must be a backend name ({', '.join(_BACKENDS)} "
                                f"or package.module:factory), not {written_for!r}")
    if backend is not None and _backend_target(written_for) != _backend_target(backend):
        raise ExpectationsError(f"{p}: written for backend {written_for!r}, this run's backend "
                                f"is {backend!r}; give the expectations of {backend!r}")


def _backend_target(name: str) -> str:
    """The ``module:factory`` a backend name stands for (the name itself when unknown)."""
    from ..backend_loader import BackendLoadError, resolve
    try:
        return resolve(name)
    except BackendLoadError:
        return name


def _signature(where: str, raw: Any, known: set[str] | None) -> Signature | None:
    """An entry's ``signature`` table, checked (one-line errors naming file and line; with
    ``known`` ids, the clause must be a clause id)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ExpectationsError(f"{where}: signature must be a table with keys "
                                f"{', '.join(_SIGNATURE_KEYS)}")
    bad = sorted(set(raw) - set(_SIGNATURE_KEYS))
    if bad:
        raise ExpectationsError(f"{where}: unknown signature key(s) {', '.join(bad)}")
    missing = [k for k in _SIGNATURE_KEYS if k not in raw]
    if missing:
        raise ExpectationsError(f"{where}: signature without {', '.join(missing)}")
    calls = raw["call"] if isinstance(raw["call"], list) else [raw["call"]]
    if not calls or not all(isinstance(c, str) and c.strip() for c in calls):
        raise ExpectationsError(f"{where}: signature call must be a function name or a list "
                                "of them")
    values = {}
    for k in ("clause", "expected", "observed"):
        v = raw[k]
        if isinstance(v, bool) or not isinstance(v, (str, int)) or not str(v).strip():
            raise ExpectationsError(f"{where}: signature {k} must be a string")
        values[k] = str(v).strip()
    if known is not None and values["clause"] not in set(registry.clauses()):
        raise ExpectationsError(f"{where}: signature clause {values['clause']!r} is no clause id")
    return Signature(values["clause"], tuple(c.strip() for c in calls), values["expected"],
                     values["observed"])


def load(path: str | Path, known_ids: Iterable[str] | None = None,
         backend: str | None = None) -> Expectations:
    """Parse and validate a file; ``known_ids`` (spec node ids and clause ids) checks ids;
    ``backend`` (the run's ``--backend``) refuses a file written for another backend."""
    p = Path(path)
    text = _read_text(p)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"{p}: malformed TOML ({exc})") from None
    extra = set(data) - {"expect", "gate_changed", "backend", "required_capabilities"}
    if extra:
        raise ExpectationsError(f"{p}: unknown top-level key(s) {', '.join(sorted(extra))}")
    _check_backend(p, data.get("backend"), backend)
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
        if not isinstance(r, dict):
            raise ExpectationsError(f"{where}: 'expect' must be an array of tables ([[expect]])")
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
                             version=str(r.get("version", "")),
                             signature=_signature(where, r.get("signature"), known)))
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
