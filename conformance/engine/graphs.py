"""Task-graph descriptions: a captured program and the host plan that follows it.

A :class:`Case` is plain data, JSON round-trippable, and independent of any backend:

* ``streams`` user streams (1-4 per model); stream 0 is the origin that begins and ends the
  capture. Every other stream joins the capture by waiting on an event recorded on a
  capturing stream (XS-01) and must end with a record that another stream waits on (XS-02).
* ``origins`` (default ``[0]``): one origin stream per captured *model* (1-3). Model ``m``'s
  capture begins on ``origins[m]`` right before the first op issued on one of its streams
  and ends right after its last one, so the models are captured one after the other or
  with their captures open together (CAP-07). A side stream belongs to the model of the
  event it first waits on; an event never crosses models (XS-07). Every model shares the
  case's buffers, words and host buffers, and all of them execute on stream 0, one after
  the other in plan order (EXE-01), so memory carries from one model to the next.
* ``buffers``: device int32 buffers with their initial contents (outputs start at the
  sentinel -1); ``words``: 64-bit device words for value write/wait, with initial values;
  ``hosts`` (default none): pinned host int32 buffers (aclrtMallocHost) that captured
  copies read and write (MODE-01, CAP-19).
* ``ops``: what is issued during the capture, in host issue order (kernel launches from
  the catalog, event record/wait, value write/wait, memset, copies of every capturable
  kind: device-to-device, pinned host-to-device and device-to-pinned host; ``pageable_copy``:
  an async copy with ordinary host memory, which a capturing stream rejects, MODE-14;
  ``end_on_side``: a CaptureEnd on a joined side stream, which must fail, CAP-11; and
  ``group_begin``/``group_end``: the launches between them on one stream form a task group,
  TG-01, numbered by their end, :func:`groups`; ``cond``: an IF or SWITCH task whose
  sub-models are captured on streams of their own, COND-05..COND-08).
* ``builds`` (default none): built models (aclmdlRIBuildBegin, one persistent stream bound,
  its launches, EndTask, BuildEnd), made before the capture over the same buffers; their
  launches are stored, not run, until an ``execute_built`` step (BLD-03).
* ``plan``: the host steps after CaptureEnd (SetParams, Disable, Update and Execute of a
  model, Sync, Query, HostWrite: a host store into a word, which releases a blocked value
  wait, and HostFill: a host store into a pinned host buffer between executions;
  GroupUpdate: a task-group update re-issuing a group's kernels from a non-capturing
  stream, TG-10; ExecuteBuilt: ExecuteAsync of a built model on stream 0; SetCond: a host
  write of a cond task's condition value, COND-04, COND-11).

A value wait on a *host word* (a word no captured op writes) may block an execution until a
plan step stores a satisfying value (TMO-01, TMO-03, TMO-06); a side stream whose last op is
not a record, or is a record no later wait takes (its fork or join event recorded again
after the origin's wait, XS-13, XS-15), is *unjoined*, and CaptureEnd fails with 107025
(XS-02, XS-03, CAP-13).

Op references in plan steps are indices into ``ops``. This module holds the case language:
the captured ops, the :class:`Case`, its JSON and the structure a case states (footprints,
models, task groups, value-wait semantics); the plan steps are in
:mod:`conformance.engine.steps`, the happens-before analysis in
:mod:`conformance.engine.ordering`, and :func:`conformance.engine.validation.check` validates
a case that came from outside (a JSON file): it must stay inside defined behaviour (every
event recorded before its waits, a wait taking the event's latest record (XS-13), every side
stream forked and joined, no two unordered ops touching the same buffer or word with a
write). Violations raise :class:`GraphError` with a one-line message.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Union

from mdlri_conformance.kernel import catalog

from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    Query, SetBadType, SetCond, SetKernel, SetValue, Step, Sync, Update)


SCHEMA = 1
SENTINEL = -1
#: user streams per model
MAX_STREAMS = 4
#: captured models per case
MAX_MODELS = 3
#: the copy directions (aclrtMemcpyKind) a capture takes (MODE-01, MODE-14: host memory
#: only when pinned)
COPY_KINDS = ("d2d", "h2d", "d2h")
#: the copy directions that involve host memory
HOST_COPY_KINDS = ("h2d", "d2h")
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
    """aclrtMemsetAsync with a byte value (a DEFAULT-type task): of the whole buffer, or,
    with ``count`` set, of ``count`` bytes from byte ``offset`` (any parity and offset:
    exactly those bytes change, RT-45). The race analysis still counts it as a write of the
    whole buffer."""

    stream: int
    buffer: int
    value: int
    offset: int = 0
    count: int | None = None

    def span(self, nbytes: int) -> tuple[int, int]:
        """(offset, count) in bytes inside a buffer of ``nbytes`` bytes."""
        return (0, nbytes) if self.count is None else (self.offset, self.count)


@dataclass(frozen=True)
class EndOnSide:
    """aclmdlRICaptureEnd on a joined side stream while the capture is open: 107036, and the
    capture stays ACTIVE (CAP-11). Issues no task."""

    stream: int


@dataclass(frozen=True)
class Copy:
    """aclrtMemcpyAsync of a whole buffer into another of the same size, captured as a
    DEFAULT-type task that moves the bytes at every execution (CAP-01, TYPE-02, EXE-02).

    ``direction`` (the aclrtMemcpyKind; "kind" is the JSON tag): "d2d" DEVICE_TO_DEVICE from
    ``buffers[src]`` to ``buffers[dst]``; "h2d" HOST_TO_DEVICE from the pinned ``hosts[src]``
    to ``buffers[dst]``; "d2h" DEVICE_TO_HOST from ``buffers[src]`` to the pinned
    ``hosts[dst]``. Pinned host memory is read and
    written when the task runs, not at capture (CAP-19); a capture takes host memory only
    pinned (MODE-01, MODE-14: see :class:`PageableCopy`)."""

    stream: int
    src: int
    dst: int
    direction: str = "d2d"


@dataclass(frozen=True)
class PageableCopy:
    """aclrtMemcpyAsync between ``buffers[buffer]`` and ordinary (pageable, not
    aclrtMallocHost) host memory on a capturing stream, ``direction`` "h2d" or "d2h": rejected
    with 107000 in every capture mode; it issues no task, moves nothing and the capture goes
    on (MODE-14, MODE-12)."""

    stream: int
    buffer: int
    direction: str = "h2d"


@dataclass(frozen=True)
class OutsideWait:
    """aclrtStreamWaitEvent on a capturing stream for an event recorded before the capture
    began (the replay records one such event on the origin before CaptureBegin): 107024,
    and the capture goes on (XS-05). Issues no task."""

    stream: int


@dataclass(frozen=True)
class StrayWait:
    """aclrtStreamWaitEvent on a capturing stream (the origin, or a side stream that has
    joined) for ``event`` while it has never been recorded: 0, no task, nothing ordered, and
    the capture goes on (XS-14). The event may be recorded later in the capture (a record
    after the wait): that record is captured as usual."""

    stream: int
    event: int


@dataclass(frozen=True)
class GroupBegin:
    """aclmdlRICaptureTaskGrpBegin on a capturing stream: the launches issued on it until
    the matching :class:`GroupEnd` form a task group (TG-01). Only kernel launches on that
    stream may follow until the end (TG-04: anything else is 507009; TG-05: a task on
    another capturing stream is 107034). It adds internal NOP tasks (TG-03) and no user
    task."""

    stream: int


@dataclass(frozen=True)
class GroupEnd:
    """aclmdlRICaptureTaskGrpEnd on the stream of the open group: 0 and a non-NULL handle
    (TG-01). Groups are numbered by their GroupEnd, in issue order."""

    stream: int


@dataclass(frozen=True)
class Cond:
    """A conditional task (COND-01, COND-05, COND-06): aclmdlRICondHandleCreate on the
    capturing model (default value 0, flag 0: the runtime never writes the value, COND-03),
    aclmdlRIAddCondTask of ``type`` ("if": 1-2 branches, "switch": 1-3) on ``stream``, and
    each sub-model captured on a fresh stream with aclmdlRICaptureToModelRIBegin (COND-07),
    its ``branches[k]`` launches (stream fields ignored), then CaptureEnd (COND-08).
    At every execution it runs, per COND-11, for "if" branch 0 when the condition value is
    non-zero and branch 1 (if any) when it is 0, for "switch" branch ``value``; the value
    starts at 0 (COND-02) and changes only by :class:`SetCond` steps."""

    stream: int
    type: str
    branches: list[list[Launch]]


Op = Union[Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy, EndOnSide, PageableCopy,
           OutsideWait, StrayWait, GroupBegin, GroupEnd, Cond]
#: the ops that issue a task (the others are host calls made during the capture)
TASK_OPS = (Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy, Cond)
#: the branch counts a conditional task type takes (COND-05)
COND_SIZES = {"if": (1, 2), "switch": (1, 3)}
#: the task-group markers (TG-01): host calls that add no user task
GROUP_OPS = (GroupBegin, GroupEnd)
#: host calls made during the capture that issue no user task and take part in no ordering
NO_TASK_OPS = (EndOnSide, PageableCopy, OutsideWait, StrayWait, GroupBegin, GroupEnd)
#: the ops whose tasks are DEFAULT: listed, but neither identifiable nor disableable
DEFAULT_OPS = (Memset, Copy)

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
    origins: list[int] = field(default_factory=lambda: [0])
    hosts: list[list[int]] = field(default_factory=list)
    builds: list[list[Launch]] = field(default_factory=list)

    def task_count(self) -> int:
        """Captured user tasks (the size measure of a counterexample)."""
        return len(self.ops)

    @property
    def models(self) -> int:
        """How many models the case captures (one per origin stream)."""
        return len(self.origins)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; ``origins`` and ``hosts`` only when they differ from the
        defaults, so a one-model case without host buffers reads as before."""
        out: dict[str, Any] = {
            "schema": self.schema, "name": self.name, "note": self.note,
            "streams": self.streams, "buffers": self.buffers, "words": self.words,
            "events": self.events,
        }
        if self.origins != [0]:
            out["origins"] = self.origins
        if self.hosts:
            out["hosts"] = self.hosts
        if self.builds:
            out["builds"] = [[_tagged(o) for o in ops] for ops in self.builds]
        out["ops"] = [_tagged(o) for o in self.ops]
        out["plan"] = [_tagged(s) for s in self.plan]
        return out

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)


_OPS: dict[str, type] = {"launch": Launch, "record": Record, "wait": Wait,
                         "value_write": ValueWrite, "value_wait": ValueWait, "memset": Memset,
                         "copy": Copy, "pageable_copy": PageableCopy,
                         "end_on_side": EndOnSide, "outside_wait": OutsideWait,
                         "stray_wait": StrayWait,
                         "group_begin": GroupBegin, "group_end": GroupEnd, "cond": Cond}
_STEPS: dict[str, type] = {"set_kernel": SetKernel, "set_value": SetValue,
                           "set_bad_type": SetBadType, "disable": Disable, "update": Update,
                           "execute": Execute, "sync": Sync, "host_write": HostWrite,
                           "query": Query, "host_fill": HostFill, "destroy": Destroy,
                           "group_update": GroupUpdate, "execute_built": ExecuteBuilt,
                           "set_cond": SetCond}
_TAG = {cls: tag for tag, cls in {**_OPS, **_STEPS}.items()}


def _tagged(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Cond):
        return {"kind": "cond", "stream": obj.stream, "type": obj.type,
                "branches": [[_tagged(op) for op in ops] for ops in obj.branches]}
    out = {"kind": _TAG[type(obj)], **asdict(obj)}
    if isinstance(obj, Memset) and obj.count is None:  # a whole-buffer memset reads as before
        del out["offset"], out["count"]
    if isinstance(obj, SetValue) and obj.word is None:  # so does a plain set_value
        del out["word"]
    return out


def _build(table: dict[str, type], raw: Any, where: str) -> Any:
    if not isinstance(raw, dict) or raw.get("kind") not in table:
        raise GraphError(f"{where}: expected an object with kind in {sorted(table)}")
    cls = table[raw["kind"]]
    fields = {k: v for k, v in raw.items() if k != "kind"}
    if cls is Cond and isinstance(fields.get("branches"), list):
        fields["branches"] = [[_build({"launch": Launch}, o, f"{where} branch {b}[{k}]")
                               for k, o in enumerate(ops)] if isinstance(ops, list) else ops
                              for b, ops in enumerate(fields["branches"])]
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
            name=str(d.get("name", "")), note=str(d.get("note", "")),
            origins=[int(o) for o in d.get("origins", [0])],
            hosts=[list(map(int, h)) for h in d.get("hosts", [])],
            builds=[[_build({"launch": Launch}, o, f"builds[{b}][{i}]")
                     for i, o in enumerate(ops)] for b, ops in enumerate(d.get("builds", []))])
    except KeyError as exc:
        raise GraphError(f"case: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, GraphError):
            raise
        raise GraphError(f"case: {exc}") from None
    return case


def from_json(text: str) -> Case:
    """Parse and structurally build a case (:func:`.validation.check` applies the semantic
    rules)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphError(f"not JSON: {exc}") from None
    return from_dict(raw)


# ---------------------------------------------------------------------------------------------
# footprints and ordering


#: (reads, writes) of an op: ("buf", i) / ("word", i) / ("host", i) references
Footprint = tuple[set[tuple[str, int]], set[tuple[str, int]]]


def op_footprint(op: Op) -> Footprint:
    """(reads, writes) of an op as sets of ("buf", i) / ("word", i) / ("host", i); KeyError
    names an unknown kernel."""
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
    elif isinstance(op, Copy):
        reads.add(("host" if op.direction == "h2d" else "buf", op.src))
        writes.add(("host" if op.direction == "d2h" else "buf", op.dst))
    elif isinstance(op, Cond):
        for launch in (x for ops in op.branches for x in ops):
            r, w = op_footprint(launch)
            reads |= r
            writes |= w
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


def stream_models(case: Case) -> list[int]:
    """The model of every user stream: ``m`` for ``origins[m]``; a side stream belongs to
    the model of the event it first waits on (XS-01); -1 for a stream that never joins
    (:func:`.validation.check` rejects it). Reads the ops as given, without checking them."""
    model = [-1] * case.streams
    for m, origin in enumerate(case.origins):
        if 0 <= origin < case.streams:
            model[origin] = m
    record_model: dict[int, int] = {}
    for op in case.ops:
        if not 0 <= getattr(op, "stream", -1) < case.streams:
            continue
        if isinstance(op, Wait) and model[op.stream] < 0 and op.event in record_model:
            model[op.stream] = record_model[op.event]
        if isinstance(op, Record) and model[op.stream] >= 0:
            record_model.setdefault(op.event, model[op.stream])
    return model


def model_streams(case: Case, model: int) -> list[int]:
    """The user streams of ``model``, in index order (its origin among them); every stream
    of a one-model case."""
    if case.models == 1:
        return list(range(case.streams)) if model == 0 else []
    return [s for s, m in enumerate(stream_models(case)) if m == model]


def op_models(case: Case) -> list[int]:
    """The model of every op (the model of its stream; 0 for every op of a one-model
    case)."""
    if case.models == 1:
        return [0] * len(case.ops)
    sm = stream_models(case)
    return [sm[op.stream] if 0 <= op.stream < case.streams else -1 for op in case.ops]


def model_events(case: Case, model: int) -> set[int]:
    """The events recorded on the streams of ``model``."""
    sm = stream_models(case)
    return {op.event for op in case.ops if isinstance(op, Record) and sm[op.stream] == model}


def groups(case: Case) -> list[list[int]]:
    """The op indices of every task group, numbered by GroupEnd in issue order (TG-01): the
    launches issued on the group's stream between its GroupBegin and GroupEnd. Reads the
    ops as given (:func:`.validation.check` validates them)."""
    out: list[list[int]] = []
    open_on: dict[int, list[int]] = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, GroupBegin):
            open_on[op.stream] = []
        elif isinstance(op, GroupEnd):
            out.append(open_on.pop(op.stream, []))
        elif isinstance(op, Launch) and op.stream in open_on:
            open_on[op.stream].append(i)
    return out


def group_ends(case: Case) -> list[int]:
    """The op index of every task group's GroupEnd, numbered as :func:`groups` numbers the
    groups (an empty group has no member to name its stream or model; its end does)."""
    return [i for i, op in enumerate(case.ops) if isinstance(op, GroupEnd)]


def grouped_ops(case: Case) -> dict[int, int]:
    """op index -> the group it belongs to (TG-01)."""
    return {i: g for g, members in enumerate(groups(case)) for i in members}


def signed64(v: int) -> int:
    """A 64-bit word as a signed integer."""
    v &= WORD_MASK
    return v - (1 << 64) if v >> 63 else v


def geq_readings_agree(have: int, want: int) -> bool:
    """Whether the two readings of a GEQ value wait agree for ``*addr == have``: the
    documented signed difference ``(int64)(have - want) >= 0`` (11-09_stream_memory_operation.md)
    and the runtime's signed comparison ``(int64)have >= (int64)want`` (the BGE its cond
    program branches on, ConvertConditionToOpAndBranchFunc, stars_cond_isa_helper.cc:1234-1256).
    They differ where the operands are 2^63 or more apart."""
    return wait_holds(have, want, 0) == (signed64(have) >= signed64(want))


def wait_holds(have: int, want: int, flag: int) -> bool:
    """Whether ``aclrtValueWait(addr, want, flag)`` is satisfied by ``*addr == have``
    (abi.md §3.5): GEQ ``(int64)(have - want) >= 0`` (wrap-around counts; the runtime's
    program compares signed, :func:`geq_readings_agree`), EQ equality,
    AND ``(have & want) != 0``, NOR ``~(have | want) != 0``, all on 64 bits. Raises
    GraphError for another flag."""
    have, want = have & WORD_MASK, want & WORD_MASK
    if flag == 0:
        return ((have - want) & WORD_MASK) < (1 << 63)
    if flag == 1:
        return have == want
    if flag == 2:
        return (have & want) != 0
    if flag == 3:
        return (~(have | want) & WORD_MASK) != 0
    raise GraphError(f"value wait flag {flag} is not GEQ 0, EQ 1, AND 2 or NOR 3")


def host_words(case: Case) -> set[int]:
    """The words no captured op writes: only the host (HostWrite steps) changes them."""
    written = {op.word for op in case.ops if isinstance(op, ValueWrite)}
    return set(range(len(case.words))) - written


def ops_on(case: Case, stream: int) -> list[int]:
    """Indices of the ops issued on ``stream``, in order."""
    return [i for i, op in enumerate(case.ops) if op.stream == stream]


def kind_of(item: Any) -> str:
    """The JSON kind tag of an op or a step."""
    return _TAG[type(item)]


def kinds(items: Iterable[Any]) -> list[str]:
    """The JSON kind tags of ops or steps."""
    return [kind_of(x) for x in items]

