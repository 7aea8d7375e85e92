"""Task-graph descriptions: a captured program and the host plan that follows it.

A :class:`Case` is plain data, JSON round-trippable, and independent of any backend:

* ``streams`` user streams (1-4); stream 0 is the origin that begins and ends the capture.
  Every other stream joins the capture by waiting on an event recorded on a capturing
  stream (XS-01) and must end with a record that another stream waits on (XS-02).
* ``buffers``: device int32 buffers with their initial contents (outputs start at the
  sentinel -1); ``words``: 64-bit device words for value write/wait, with initial values.
* ``ops``: what is issued during the capture, in host issue order (kernel launches from
  the catalog, event record/wait, value write/wait, memset).
* ``plan``: the host steps after CaptureEnd (SetParams, Disable, Update, Execute, Sync).

Op references in plan steps are indices into ``ops``. :func:`check` validates a case that
came from outside (a JSON file): it must stay inside defined behaviour (every event
recorded once and before its waits, every side stream forked and joined, no two unordered
ops touching the same buffer or word with a write). Violations raise :class:`GraphError`
with a one-line message.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Union

from mdlri_conformance.kernel import catalog

SCHEMA = 1
SENTINEL = -1
MAX_STREAMS = 4
#: device words are 64-bit unsigned
WORD_MASK = (1 << 64) - 1


class GraphError(ValueError):
    """A malformed or out-of-contract case (one line, names the offending part)."""


# ---------------------------------------------------------------------------------------------
# captured ops


@dataclass(frozen=True)
class Launch:
    """aclrtLaunchKernelWithHostArgs of a catalog kernel; pointer args name buffer indices."""

    stream: int
    kernel: str
    args: dict[str, int]
    num_blocks: int = 1


@dataclass(frozen=True)
class Record:
    """aclrtRecordEvent(event, stream)."""

    stream: int
    event: int


@dataclass(frozen=True)
class Wait:
    """aclrtStreamWaitEvent(stream, event)."""

    stream: int
    event: int


@dataclass(frozen=True)
class ValueWrite:
    """aclrtValueWrite(words[word], value, 0, stream)."""

    stream: int
    word: int
    value: int


@dataclass(frozen=True)
class ValueWait:
    """aclrtValueWait(words[word], value, flag, stream); flag is a ValueWaitFlag."""

    stream: int
    word: int
    value: int
    flag: int = 1  # EQ


@dataclass(frozen=True)
class Memset:
    """aclrtMemsetAsync of a whole buffer with a byte value (a DEFAULT-type task)."""

    stream: int
    buffer: int
    value: int


Op = Union[Launch, Record, Wait, ValueWrite, ValueWait, Memset]

# ---------------------------------------------------------------------------------------------
# plan steps


@dataclass(frozen=True)
class SetKernel:
    """TaskSetParams(KERNEL) on a Launch op: new host args (and optionally another kernel
    with the same argument layout)."""

    op: int
    args: dict[str, int]
    kernel: str | None = None


@dataclass(frozen=True)
class SetValue:
    """TaskSetParams(VALUE_WRITE) on a ValueWrite op: same word, new value."""

    op: int
    value: int


@dataclass(frozen=True)
class SetBadType:
    """TaskSetParams with a type SetParams rejects (EVENT_*, DEFAULT): 107000 + FAULT."""

    op: int
    type: int


@dataclass(frozen=True)
class Disable:
    """TaskDisable on an op's task (a Memset op gives a DEFAULT task: 107000 + FAULT)."""

    op: int


@dataclass(frozen=True)
class Update:
    """aclmdlRIUpdate."""


@dataclass(frozen=True)
class Execute:
    """aclmdlRIExecuteAsync on the origin stream, ``times`` times in a row."""

    times: int = 1


@dataclass(frozen=True)
class Sync:
    """aclrtSynchronizeStreamWithTimeout(origin, timeout_ms); then every buffer is read."""

    timeout_ms: int = 5000


Step = Union[SetKernel, SetValue, SetBadType, Disable, Update, Execute, Sync]

# ---------------------------------------------------------------------------------------------
# the case


@dataclass
class Case:
    """A generated (or hand-written) task graph and host plan."""

    streams: int
    buffers: list[list[int]]
    words: list[int]
    events: int
    ops: list[Op]
    plan: list[Step]
    name: str = ""
    note: str = ""
    schema: int = SCHEMA

    def task_count(self) -> int:
        """Captured user tasks (the size measure of a counterexample)."""
        return len(self.ops)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema, "name": self.name, "note": self.note,
            "streams": self.streams, "buffers": self.buffers, "words": self.words,
            "events": self.events,
            "ops": [_tagged(o) for o in self.ops],
            "plan": [_tagged(s) for s in self.plan],
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)


_OPS: dict[str, type] = {"launch": Launch, "record": Record, "wait": Wait,
                         "value_write": ValueWrite, "value_wait": ValueWait, "memset": Memset}
_STEPS: dict[str, type] = {"set_kernel": SetKernel, "set_value": SetValue,
                           "set_bad_type": SetBadType, "disable": Disable, "update": Update,
                           "execute": Execute, "sync": Sync}
_TAG = {cls: tag for tag, cls in {**_OPS, **_STEPS}.items()}


def _tagged(obj: Any) -> dict[str, Any]:
    return {"kind": _TAG[type(obj)], **asdict(obj)}


def _build(table: dict[str, type], raw: Any, where: str) -> Any:
    if not isinstance(raw, dict) or raw.get("kind") not in table:
        raise GraphError(f"{where}: expected an object with kind in {sorted(table)}")
    cls = table[raw["kind"]]
    fields = {k: v for k, v in raw.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError as exc:
        raise GraphError(f"{where}: bad fields for {raw['kind']} ({exc})") from None


def from_dict(d: Any) -> Case:
    """Build a case from parsed JSON; structural problems raise GraphError."""
    if not isinstance(d, dict):
        raise GraphError("case: expected a JSON object")
    if d.get("schema", SCHEMA) != SCHEMA:
        raise GraphError(f"case: schema {d.get('schema')!r} is not {SCHEMA}")
    try:
        case = Case(
            streams=int(d["streams"]), buffers=[list(map(int, b)) for b in d["buffers"]],
            words=[int(w) for w in d.get("words", [])], events=int(d.get("events", 0)),
            ops=[_build(_OPS, o, f"ops[{i}]") for i, o in enumerate(d["ops"])],
            plan=[_build(_STEPS, s, f"plan[{i}]") for i, s in enumerate(d.get("plan", []))],
            name=str(d.get("name", "")), note=str(d.get("note", "")))
    except KeyError as exc:
        raise GraphError(f"case: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, GraphError):
            raise
        raise GraphError(f"case: {exc}") from None
    return case


def from_json(text: str) -> Case:
    """Parse and structurally build a case (use :func:`check` for the semantic rules)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphError(f"not JSON: {exc}") from None
    return from_dict(raw)


# ---------------------------------------------------------------------------------------------
# footprints and ordering


#: (reads, writes) of an op: ("buf", i) / ("word", i) references
Footprint = tuple[set[tuple[str, int]], set[tuple[str, int]]]


def op_footprint(op: Op) -> Footprint:
    """(reads, writes) of an op as sets of ("buf", i) / ("word", i); KeyError names an
    unknown kernel."""
    reads: set[tuple[str, int]] = set()
    writes: set[tuple[str, int]] = set()
    if isinstance(op, Launch):
        for f in catalog.get(op.kernel).fields:
            if f.kind != "ptr":
                continue
            ref = ("buf", op.args[f.name])
            if f.role in ("in", "inout"):
                reads.add(ref)
            if f.role in ("out", "inout"):
                writes.add(ref)
    elif isinstance(op, ValueWrite):
        writes.add(("word", op.word))
    elif isinstance(op, ValueWait):
        reads.add(("word", op.word))
    elif isinstance(op, Memset):
        writes.add(("buf", op.buffer))
    return reads, writes


def clash(a: Footprint, b: Footprint) -> set[tuple[str, int]]:
    """The buffers/words two footprints both touch with at least one of them writing (a race
    when the two ops are unordered)."""
    (ra, wa), (rb, wb) = a, b
    return (wa & (rb | wb)) | (wb & ra)


def launch_values(op: Launch, buffer_addr: Callable[[int], int]) -> dict[str, int]:
    """A launch's argument values with buffer indices replaced by ``buffer_addr(index)``;
    KeyError names an unknown kernel."""
    spec = catalog.get(op.kernel)
    return {f.name: buffer_addr(op.args[f.name]) if f.kind == "ptr" else op.args[f.name]
            for f in spec.fields}


def pack_launch(op: Launch, buffer_addr: Callable[[int], int]) -> bytes:
    """The kernel's packed argument struct (what a kernel task carries, GETP-03)."""
    return catalog.get(op.kernel).pack(**launch_values(op, buffer_addr))


def happens_before_ops(ops: list[Op | None]) -> list[set[int]]:
    """For each op index, the op indices that happen before it (transitively); ``None``
    entries (ops a plan removed) take part in nothing.

    Edges: program order on a stream, and record(e) -> every later wait(e).
    """
    before: list[set[int]] = []
    last_on: dict[int, int] = {}
    record_of: dict[int, int] = {}
    for i, op in enumerate(ops):
        preds: set[int] = set()
        if op is not None:
            if op.stream in last_on:
                j = last_on[op.stream]
                preds |= before[j] | {j}
            if isinstance(op, Wait) and op.event in record_of:
                j = record_of[op.event]
                preds |= before[j] | {j}
            if isinstance(op, Record):
                record_of[op.event] = i
            last_on[op.stream] = i
        before.append(preds)
    return before


def happens_before(case: Case) -> list[set[int]]:
    """:func:`happens_before_ops` of a case's ops."""
    return happens_before_ops(list(case.ops))


def check(case: Case) -> None:
    """Raise GraphError unless the case stays inside defined behaviour."""
    if not 1 <= case.streams <= MAX_STREAMS:
        raise GraphError(f"streams: {case.streams} is not in 1..{MAX_STREAMS}")
    for i, b in enumerate(case.buffers):
        if not b:
            raise GraphError(f"buffers[{i}]: empty")
    joined = {0}
    recorded: dict[int, int] = {}
    waited: set[int] = set()
    for i, op in enumerate(case.ops):
        where = f"ops[{i}]"
        if not 0 <= op.stream < case.streams:
            raise GraphError(f"{where}: stream {op.stream} out of range")
        if op.stream not in joined:
            if not (isinstance(op, Wait) and op.event in recorded):
                raise GraphError(f"{where}: stream {op.stream} must join the capture by waiting "
                                 "on a recorded event first")
            joined.add(op.stream)
        if isinstance(op, (Record, Wait)) and not 0 <= op.event < case.events:
            raise GraphError(f"{where}: event {op.event} out of range")
        if isinstance(op, Record):
            if op.event in recorded:
                raise GraphError(f"{where}: event {op.event} recorded twice")
            recorded[op.event] = i
        if isinstance(op, Wait):
            if op.event not in recorded:
                raise GraphError(f"{where}: wait on event {op.event} before its record")
            waited.add(op.event)
        if isinstance(op, Launch):
            _check_launch(case, op, where)
        if isinstance(op, (ValueWrite, ValueWait)) and not 0 <= op.word < len(case.words):
            raise GraphError(f"{where}: word {op.word} out of range")
        if isinstance(op, Memset) and not 0 <= op.buffer < len(case.buffers):
            raise GraphError(f"{where}: buffer {op.buffer} out of range")
    _check_joins(case)
    _check_races(case)
    _check_value_waits(case)
    for i, step in enumerate(case.plan):
        op_index = getattr(step, "op", None)
        if op_index is not None and not 0 <= op_index < len(case.ops):
            raise GraphError(f"plan[{i}]: op {op_index} out of range")
        if isinstance(step, SetKernel):
            target = case.ops[step.op]
            if not isinstance(target, Launch):
                raise GraphError(f"plan[{i}]: set_kernel on a {_TAG[type(target)]} op")
            new = Launch(target.stream, step.kernel or target.kernel, step.args, target.num_blocks)
            if catalog.get(new.kernel).fields != catalog.get(target.kernel).fields:
                raise GraphError(f"plan[{i}]: kernel {new.kernel} changes the argument layout")
            _check_launch(case, new, f"plan[{i}]")


def _check_launch(case: Case, op: Launch, where: str) -> None:
    try:
        spec = catalog.get(op.kernel)
    except KeyError as exc:
        raise GraphError(f"{where}: {exc.args[0]}") from None
    names = {f.name for f in spec.fields}
    if set(op.args) != names:
        raise GraphError(f"{where}: {op.kernel} takes {sorted(names)}, got {sorted(op.args)}")
    n = op.args.get("n", catalog.SEED_ELEMENTS)
    for f in spec.fields:
        if f.kind == "ptr":
            b = op.args[f.name]
            if not 0 <= b < len(case.buffers):
                raise GraphError(f"{where}: buffer {b} out of range")
            if len(case.buffers[b]) < n:
                raise GraphError(f"{where}: buffer {b} holds {len(case.buffers[b])} < {n} elements")


def _check_joins(case: Case) -> None:
    before = happens_before(case)
    last: dict[int, int] = {}
    for i, op in enumerate(case.ops):
        last[op.stream] = i
    if case.streams > 1 and 0 not in last:
        raise GraphError("ops: the origin stream issues nothing, so nothing can join back")
    for s in range(1, case.streams):
        if s not in last:
            raise GraphError(f"stream {s}: issues nothing (remove it or use it)")
        if not isinstance(case.ops[last[s]], Record):
            raise GraphError(f"stream {s}: its last op must be a record (XS-02)")
        if last[s] not in before[last[0]]:
            raise GraphError(f"stream {s}: not joined back to the origin stream (XS-02)")


def _check_races(case: Case) -> None:
    before = happens_before(case)
    foot = [op_footprint(op) for op in case.ops]
    for i in range(len(case.ops)):
        for j in range(i):
            if j in before[i]:
                continue
            touched = clash(foot[i], foot[j])
            if touched:
                kind, idx = sorted(touched)[0]
                raise GraphError(f"ops[{j}] and ops[{i}] touch {kind} {idx} unordered")


def _check_value_waits(case: Case) -> None:
    """A value wait must be satisfied by the last ordered write of its word (or its initial
    value), so no execution blocks; it is compared with EQ only."""
    before = happens_before(case)
    for i, op in enumerate(case.ops):
        if not isinstance(op, ValueWait):
            continue
        if op.flag != 1:
            raise GraphError(f"ops[{i}]: only EQ value waits are generated")
        value = case.words[op.word]
        for j in sorted(before[i]):
            prev = case.ops[j]
            if isinstance(prev, ValueWrite) and prev.word == op.word:
                value = prev.value
        if value != op.value:
            raise GraphError(f"ops[{i}]: waits for {op.value} but word {op.word} holds {value}")


def ops_on(case: Case, stream: int) -> list[int]:
    """Indices of the ops issued on ``stream``, in order."""
    return [i for i, op in enumerate(case.ops) if op.stream == stream]


def kinds(items: Iterable[Any]) -> list[str]:
    """The JSON kind tags of ops or steps."""
    return [_TAG[type(x)] for x in items]
